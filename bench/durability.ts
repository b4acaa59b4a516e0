// Durability benchmark, two tables, each against a baseline measured in the same run:
//   1. `train` restored from the local output cache after an edit and its revert, against
//      rerunning it (`--force train`: the same training again). The workspace declares only
//      `train`, with the repository's rule and configs (test/helpers/train-fixtures.ts: 60
//      fixture scenarios, small model), PPO steps raised to make the run a real one.
//   2. What fsync costs (outputs of rules that ran ≥ 1 s before their rename; the others, the
//      receiving directories and the trace log at the end of the build, concurrently, unless the
//      committed rules ran for less than 1 s in all: then nothing is synced and the stat-keyed
//      records are marked for this boot only, packages/engine/src/state/durability.ts): full
//      builds from clean with fsync on (the
//      default) and off (RC1_FSYNC=off), interleaved, for the 1 000-target graph of
//      bench/build-graph.ts (1 000 small outputs) and for one target writing a 128 MiB directory
//      (4 × 32 MiB, checkpoint-like); and the graph's no-op, where nothing is committed.
//   3. The fsync itself, in process: writing a file and fsyncing it against writing it alone
//      (4 KiB × 200 and 32 MiB × 4), which CPU contention from other work disturbs far less than
//      whole builds do.
// Every CLI figure is the wall time of the whole process, best / median of the runs.
// Run: node --import tsx bench/durability.ts [--quick] [--part train|fsync]   (needs dist/)
import {
  closeSync,
  fsyncSync,
  mkdtempSync,
  openSync,
  rmSync,
  writeFileSync,
  writeSync,
  mkdirSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeGraph, writeRc1Workspace } from './graph-workspace.ts';
import { fmtMs, hasFlag, loadNote, machineReport, runChild, summarize, table, type Sample } from './util.ts';
import { SMALL, trainWorkspace } from '../test/helpers/train-fixtures.ts';

const QUICK = hasFlag('--quick');
const RUNS = QUICK ? 1 : 3;
const REPO = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(REPO, 'packages', 'engine', 'bin', 'rc1-build.js');
const STEPS = QUICK ? 30 : 60;

interface Timed {
  ms: number;
  events: { event: string; target?: string }[];
}

function build(dir: string, args: string[], env: Record<string, string> = {}): Timed {
  const r = runChild(process.execPath, [BIN, ...args, '--json'], { cwd: dir, env: { ...process.env, ...env } });
  if (r.status !== 0)
    throw new Error(
      `rc1-build ${args.join(' ')} in ${dir} exited ${r.status}\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`,
    );
  const events = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Timed['events'][number]);
  return { ms: r.ms, events };
}

function what(t: Timed, target: string): string {
  if (t.events.some((e) => e.event === 'restore' && e.target === target)) return 'restored';
  if (t.events.some((e) => e.event === 'start' && e.target === target)) return 'ran';
  return 'up to date';
}

const cell = (s: Sample): string => `${fmtMs(s.best)} / ${fmtMs(s.median)}`;

function trainTable(): string {
  const rig = trainWorkspace();
  try {
    rig.write('configs/profiles/dev.yaml', `${JSON.stringify({ ...SMALL, ppo: { ...SMALL.ppo, steps: STEPS } })}\n`);
    const weights = rig.read('configs/weights.json');
    // A new edit each round (never seen before), so every edit build really trains.
    const edited = (i: number): string =>
      weights
        .replace('"correctness": 0.3', `"correctness": ${0.3 + (i + 1) / 100}`)
        .replace('"reasoning": 0.15', `"reasoning": ${0.15 - (i + 1) / 100}`);
    const first = build(rig.dir, ['train']);
    if (what(first, 'train') !== 'ran') throw new Error('the first build did not run train');
    const restores: number[] = [];
    const reruns: number[] = [];
    const edits: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      rig.write('configs/weights.json', edited(i));
      const e = build(rig.dir, ['train']);
      if (what(e, 'train') !== 'ran') throw new Error(`after an edit train was ${what(e, 'train')}, not run`);
      edits.push(e.ms);
      rig.write('configs/weights.json', weights);
      const r = build(rig.dir, ['train']);
      if (what(r, 'train') !== 'restored')
        throw new Error(`after the revert train was ${what(r, 'train')}, not restored`);
      restores.push(r.ms);
      const f = build(rig.dir, ['train', '--force']);
      if (what(f, 'train') !== 'ran') throw new Error('--force train did not run');
      reruns.push(f.ms);
    }
    const restore = summarize(restores);
    const rerun = summarize(reruns);
    return [
      `## train: restore from the local cache after a revert vs rerun (${STEPS} PPO steps, tfjs/wasm; ${RUNS} run${RUNS > 1 ? 's' : ''})`,
      '',
      table(
        ['case (best / median ms)', 'wall time', 'train was'],
        [
          ['edit configs/weights.json, build', cell(summarize(edits)), 'ran'],
          ['revert it, build (restore)', cell(restore), 'restored'],
          ['baseline: --force train (rerun)', cell(rerun), 'ran'],
          [
            'restore / rerun',
            `${((restore.median / rerun.median) * 100).toFixed(1)} %`,
            `${(rerun.median / restore.median).toFixed(1)}× faster`,
          ],
        ],
      ),
    ].join('\n');
  } finally {
    rig.cleanup();
  }
}

const BIG_RULE = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
import * as path from 'node:path';
export default defineRule({ name: 'big', version: 1, run(ctx) {
  const dir = ctx.output('ckpt');
  const chunk = Buffer.alloc(1 << 20, fs.readFileSync(ctx.inputs('v')[0], 'utf8'));
  for (let f = 0; f < 4; f++) {
    const fd = fs.openSync(path.join(dir, 'shard_' + f + '.bin'), 'w');
    for (let i = 0; i < 32; i++) fs.writeSync(fd, chunk);
    fs.closeSync(fd);
  }
}});
`;

function bigWorkspace(dir: string): void {
  mkdirSync(join(dir, 'rules'), { recursive: true });
  mkdirSync(join(dir, 'src'));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(join(REPO, 'packages', 'engine'), join(dir, 'node_modules', 'rc1-build'), 'dir');
  writeFileSync(join(dir, 'package.json'), '{"name":"rc1-bench-big","private":true,"type":"module"}\n');
  writeFileSync(join(dir, 'rules', 'big.ts'), BIG_RULE);
  writeFileSync(join(dir, 'src', 'v.txt'), 'v');
  writeFileSync(
    join(dir, 'rc1.build.ts'),
    `import { definePipeline, defineTarget } from 'rc1-build';
export default definePipeline({ targets: [defineTarget({ name: 'big', rule: 'rules/big.ts', inputs: { v: 'src/v.txt' }, outputs: ['ckpt/'] })] });
`,
  );
}

/** Full build from clean: outputs, manifest and state removed (the compile cache is kept, as in any rebuild). */
function fromClean(dir: string, env: Record<string, string>): number {
  for (const p of [
    'out',
    'ckpt',
    'reports',
    'logs',
    '.rc1/trace.log',
    '.rc1/cache',
    '.rc1/statcache.json',
    '.rc1/state',
  ])
    rmSync(join(dir, p), { recursive: true, force: true });
  return build(dir, ['-j', '2'], env).ms;
}

function fsyncTable(): string {
  const base = mkdtempSync(join(tmpdir(), 'rc1-bench-durability-'));
  try {
    const graphDir = join(base, 'graph');
    mkdirSync(graphDir);
    writeRc1Workspace(graphDir, makeGraph(), join(REPO, 'packages', 'engine'));
    const bigDir = join(base, 'big');
    bigWorkspace(bigDir);
    const ON = {};
    const OFF = { RC1_FSYNC: 'off' };
    build(graphDir, ['-j', '2']); // compile caches warm
    build(bigDir, []);
    const cases: { label: string; run: (env: Record<string, string>) => number }[] = [
      { label: 'full build, 1 000 targets (1 000 small outputs)', run: (env) => fromClean(graphDir, env) },
      { label: 'full build, one 128 MiB directory output', run: (env) => fromClean(bigDir, env) },
      { label: 'no-op, 1 000 targets (nothing committed)', run: (env) => build(graphDir, ['-j', '2'], env).ms },
    ];
    const rows: string[][] = [];
    for (const c of cases) {
      const on: number[] = [];
      const off: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        on.push(c.run(ON));
        off.push(c.run(OFF));
      } // interleaved
      const a = summarize(on);
      const b = summarize(off);
      rows.push([
        c.label,
        cell(a),
        cell(b),
        `${fmtMs(a.median - b.median)} ms (${((a.median / b.median - 1) * 100).toFixed(0)} %)`,
      ]);
    }
    return [
      `## commit with vs without fsync (filesystem of ${tmpdir()}; ${RUNS} run${RUNS > 1 ? 's' : ''} each, interleaved)`,
      '',
      table(
        ['case (best / median ms)', 'fsync on (default)', 'baseline: RC1_FSYNC=off', 'cost of fsync (median)'],
        rows,
      ),
    ].join('\n');
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

function fsyncMicroTable(): string {
  const base = mkdtempSync(join(tmpdir(), 'rc1-bench-fsync-'));
  try {
    const rows: string[][] = [];
    for (const [label, size, count] of [
      ['4 KiB file', 4096, 200],
      ['32 MiB file', 32 << 20, 4],
    ] as const) {
      const data = Buffer.alloc(size, 7);
      const on: number[] = [];
      const off: number[] = [];
      for (let i = 0; i < count; i++) {
        for (const sync of i % 2 ? [true, false] : [false, true]) {
          // interleaved
          const f = join(base, `f${i}-${sync}`);
          const t0 = performance.now();
          const fd = openSync(f, 'w');
          writeSync(fd, data);
          if (sync) fsyncSync(fd);
          closeSync(fd);
          (sync ? on : off).push(performance.now() - t0);
          rmSync(f);
        }
      }
      const a = summarize(on);
      const b = summarize(off);
      rows.push([`${label} (${count} each)`, cell(a), cell(b), `${fmtMs(a.median - b.median)} ms`]);
    }
    return [
      `## one output file: write + fsync vs write alone (in process, ${tmpdir()})`,
      '',
      table(['case (best / median ms per file)', 'write + fsync', 'baseline: write alone', 'fsync (median)'], rows),
    ].join('\n');
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

const PART = process.argv.includes('--part') ? process.argv[process.argv.indexOf('--part') + 1] : 'all';
console.log(`# rc1-build durability benchmark${QUICK ? ' (--quick)' : ''}\n`);
console.log(machineReport());
if (PART === 'all' || PART === 'train') console.log(`\n${trainTable()}`);
if (PART === 'all' || PART === 'fsync') console.log(`\n${fsyncTable()}\n\n${fsyncMicroTable()}`);
console.log('');
console.log(loadNote('at end'));
