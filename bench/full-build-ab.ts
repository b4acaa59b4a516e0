// A/B of two (or more) engines on the full build from clean of the 1 000-target bench graph
// (bench/graph-workspace.ts), in ONE workspace: before each run the workspace is cleaned (.rc1/,
// reports/, the outputs) and node_modules/rc1-build is pointed at that run's engine, so every
// engine's files land in the same directories (on ext4 a file's inode goes in its directory's block
// group, and what was deleted there in the last seconds decides what a new inode costs: separate
// workspaces measure their placement as much as the engine). Engines alternate A B, B A, …; each
// run's wall time, user and system CPU come from GNU time. With --own, each measured build follows
// an untimed build of the same engine and its clean (a build from clean after that engine's own
// build, as bench/build-graph.ts runs it), so each engine pays for the files it itself deleted.
// The outputs' digest is printed per run: every engine must write the same bytes.
// With --phases, each build runs with RC1_DEBUG=timing and the table also compares the engines
// phase by phase (median ms, and the paired median difference to the first engine with the
// number of pairs where it was lower): the whole build's wall time on this disk swings far more
// than most changes move it, while one phase (the end-of-build sync, the manifest) can be read
// apart. A change that only moves time from one phase into another shows here as two rows.
// Run: node --import tsx bench/full-build-ab.ts [--own] [--phases] [--rounds N] DIR NAME=ENGINE_DIR NAME=ENGINE_DIR …
//   ENGINE_DIR: a built packages/engine (bin/rc1-build.js, dist/), e.g. a `git archive` of another
//   commit's packages/engine with node_modules beside it and `node scripts/build.mjs` run in it.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { makeGraph, writeRc1Workspace } from './graph-workspace.ts';
import { filesystemNote, hasFlag, summarize } from './util.ts';

const args = process.argv.slice(2).filter((a) => a !== '--own' && a !== '--phases');
const ri = args.indexOf('--rounds');
const rounds = ri >= 0 ? Number(args.splice(ri, 2)[1]) : 8;
const [dirArg, ...specs] = args;
if (!dirArg || specs.length < 2 || !Number.isInteger(rounds) || rounds < 1) {
  console.error('usage: bench/full-build-ab.ts [--own] [--phases] [--rounds N] DIR NAME=ENGINE_DIR NAME=ENGINE_DIR …');
  process.exit(64);
}
const own = hasFlag('--own');
const phases = hasFlag('--phases');
const dir = resolve(dirArg);
const graph = makeGraph();
const engines = specs.map((s) => {
  const [name, engine] = s.split('=') as [string, string | undefined];
  if (!engine || !existsSync(join(engine, 'bin', 'rc1-build.js'))) {
    console.error(`${s}: expected NAME=ENGINE_DIR, a packages/engine with bin/rc1-build.js`);
    process.exit(64);
  }
  return {
    name,
    engine: resolve(engine),
    rows: [] as { wall: number; user: number; sys: number; load: number; phases: Map<string, number> }[],
  };
});
if (!existsSync(dir)) {
  mkdirSync(dir, { recursive: true });
  writeRc1Workspace(dir, graph, engines[0]!.engine);
}

function clean(): void {
  rmSync(join(dir, '.rc1'), { recursive: true, force: true });
  rmSync(join(dir, 'reports'), { recursive: true, force: true });
  for (const f of readdirSync(join(dir, 'out'))) rmSync(join(dir, 'out', f), { force: true });
}

function digest(): string {
  const h = createHash('sha256');
  for (const t of graph)
    h.update(
      `${t.output} ${createHash('sha256')
        .update(readFileSync(join(dir, t.output)))
        .digest('hex')}\n`,
    );
  return h.digest('hex').slice(0, 16);
}

const build = (engine: string): string[] => [process.execPath, join(engine, 'bin', 'rc1-build.js'), '-j', '2'];

for (let r = 0; r < rounds; r++) {
  for (const e of r % 2 === 0 ? engines : [...engines].reverse()) {
    clean();
    unlinkSync(join(dir, 'node_modules', 'rc1-build'));
    symlinkSync(e.engine, join(dir, 'node_modules', 'rc1-build'), 'dir');
    if (own) {
      const [cmd, ...rest] = build(e.engine);
      spawnSync(cmd!, rest, { cwd: dir, stdio: 'ignore' });
      clean();
    }
    const load = loadavg()[0]!;
    const res = spawnSync('/usr/bin/time', ['-f', '%e %U %S', ...build(e.engine)], {
      cwd: dir,
      encoding: 'utf8',
      ...(phases ? { env: { ...process.env, RC1_DEBUG: 'timing' } } : {}),
    });
    if (res.status !== 0) {
      console.error(`${e.name}: the build failed\n${res.stdout.slice(-2000)}${res.stderr.slice(-2000)}`);
      process.exit(1);
    }
    const [wall, user, sys] = res.stderr
      .trim()
      .split('\n')
      .pop()!
      .split(' ')
      .map((x) => Number(x) * 1000) as [number, number, number];
    // `rc1 timing: <phase>   <ms> ms (at <ms> ms)` (packages/engine/src/util/timing.ts), on stderr.
    const phaseMs = new Map<string, number>();
    for (const m of res.stderr.matchAll(/^rc1 timing: (.+?) +([\d.]+) ms \(at /gm))
      phaseMs.set(m[1]!, (phaseMs.get(m[1]!) ?? 0) + Number(m[2]));
    e.rows.push({ wall, user, sys, load, phases: phaseMs });
    console.log(
      `round ${r} ${e.name}: wall ${wall.toFixed(0)} user ${user.toFixed(0)} sys ${sys.toFixed(0)} ms, load ${load.toFixed(2)}, outputs ${digest()}`,
    );
  }
}

const cell = (xs: number[]): string => {
  const s = summarize(xs);
  return `${s.median.toFixed(0)} (${s.best.toFixed(0)}–${Math.max(...xs).toFixed(0)})`;
};
console.log(`\n${filesystemNote(dir)}`);
console.log('\n| engine | wall ms | user ms | sys ms | user+sys ms | load (1 min) |\n|---|---|---|---|---|---|');
for (const e of engines) {
  const loads = e.rows.map((x) => x.load);
  console.log(
    `| ${e.name} | ${cell(e.rows.map((x) => x.wall))} | ${cell(e.rows.map((x) => x.user))} | ${cell(e.rows.map((x) => x.sys))} | ${cell(e.rows.map((x) => x.user + x.sys))} | ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} |`,
  );
}
const base = engines[0]!;
console.log(`\nPaired ratios to ${base.name} (median (min–max) of the ${rounds} pairs):`);
for (const e of engines.slice(1)) {
  const ratio = (f: (x: (typeof e.rows)[number]) => number): string => {
    const xs = e.rows.map((x, i) => f(x) / f(base.rows[i]!));
    const s = summarize(xs);
    return `${s.median.toFixed(2)} (${s.best.toFixed(2)}–${Math.max(...xs).toFixed(2)})`;
  };
  console.log(
    `${e.name}/${base.name}: user+sys ${ratio((x) => x.user + x.sys)}, sys ${ratio((x) => x.sys)}, wall ${ratio((x) => x.wall)}`,
  );
}
if (phases) {
  const names = [...new Set(engines.flatMap((e) => e.rows.flatMap((r) => [...r.phases.keys()])))];
  const head = engines.map((e) => e.name);
  console.log(
    `\nPhases (RC1_DEBUG=timing), median ms; for each other engine the paired median difference to ${base.name} and the pairs where it was lower:\n`,
  );
  console.log(
    `| phase | ${head.join(' | ')} | ${engines
      .slice(1)
      .map((e) => `${e.name} − ${base.name}`)
      .join(' | ')} |`,
  );
  console.log(
    `|---|${head.map(() => '---|').join('')}${engines
      .slice(1)
      .map(() => '---|')
      .join('')}`,
  );
  for (const n of names) {
    const of = (e: (typeof engines)[number]): number[] => e.rows.map((r) => r.phases.get(n) ?? 0);
    const meds = engines.map((e) => summarize(of(e)).median.toFixed(1));
    const diffs = engines.slice(1).map((e) => {
      const d = of(e).map((x, i) => x - of(base)[i]!);
      return `${summarize(d).median >= 0 ? '+' : ''}${summarize(d).median.toFixed(1)} (lower in ${d.filter((x) => x < 0).length}/${d.length})`;
    });
    console.log(`| ${n} | ${meds.join(' | ')} | ${diffs.join(' | ')} |`);
  }
}
