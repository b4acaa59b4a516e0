// Two engines' resident servers side by side on the served one-leaf change (+1 byte in
// src/s_000.txt of bench/graph-workspace.ts's 1 000-target graph, 34 targets re-run): one
// workspace per engine, each with its own server, the commands alternating A B B A …, so drift in
// the machine's load hits both alike. Per command: the client's wall and CPU (GNU time) and the
// server's own wall and CPU (`rc1-build server status`); medians and the pair-by-pair ratio A/B.
// With --timing the servers run with RC1_DEBUG=timing and the phases of every counted command
// (from each server's .rc1/server.log) are summarised as min–max and median per phase.
// Run: node --import tsx bench/served-ab.ts ENGINE_A[:CLIENT] ENGINE_B[:CLIENT] [PAIRS] [--timing] [--noop]
//   ENGINE_*: a packages/engine directory with a built dist/ (and node_modules reachable from it).
//   CLIENT: js (default: node bin/rc1-build.js, the JavaScript client) or native (bin/rc1-build,
//   the launcher, which runs dist/rc1-client): one engine against itself with each client
//   measures what the client costs.
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { makeGraph, sourcePath, writeRc1Workspace } from './graph-workspace.ts';
import { fmtMs, hasFlag, loadNote, sleepMs, summarize, table } from './util.ts';

const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
if (args.length < 2) {
  console.error('usage: served-ab.ts ENGINE_A ENGINE_B [PAIRS] [--timing] [--noop]');
  process.exit(2);
}
const SPECS = [args[0]!, args[1]!].map((a) => {
  const m = /^(.*):(js|native)$/.exec(a);
  return { engine: resolve(m ? m[1]! : a), client: (m ? m[2] : 'js') as 'js' | 'native' };
});
const ENGINES = [SPECS[0]!.engine, SPECS[1]!.engine] as const;
const PAIRS = Number(args[2] ?? 10);
const TIMING = hasFlag('--timing');
const CHANGE = !hasFlag('--noop');
const env: NodeJS.ProcessEnv = { ...process.env, RC1_NO_SERVER: undefined };
if (TIMING) env.RC1_DEBUG = 'timing';
else delete env.RC1_DEBUG;
delete env.RC1_NO_SERVER;
for (const e of ENGINES)
  if (!existsSync(join(e, 'dist', 'cli.js'))) throw new Error(`${e}/dist/cli.js is missing: build it first`);
for (const sp of SPECS)
  if (sp.client === 'native' && !existsSync(join(sp.engine, 'dist', 'rc1-client')))
    throw new Error(`${sp.engine}/dist/rc1-client is missing: build the engine where a C compiler is`);

interface Side {
  engine: string;
  bin: string;
  /** The command a user runs: [node, bin/rc1-build.js] or [bin/rc1-build]. */
  command: string[];
  dir: string;
  client: { wall: number[]; cpu: number[] };
  server: { wall: number[]; cpu: number[] };
  logFrom: number;
}

function sh(side: Side, argv: string[], extra: NodeJS.ProcessEnv = {}): { wall: number; cpu: number; out: string } {
  const t0 = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S', ...side.command, ...argv], {
    cwd: side.dir,
    encoding: 'utf8',
    env: { ...env, ...extra },
  });
  const wall = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}: ${r.stderr.slice(-2000)}`);
  const [u, s] = r.stderr.trim().split('\n').pop()!.split(' ').map(Number);
  return { wall, cpu: ((u ?? 0) + (s ?? 0)) * 1000, out: r.stdout };
}

function served(side: Side): { client: { wall: number; cpu: number }; server: { wall: number; cpu: number } } {
  if (CHANGE) appendFileSync(join(side.dir, sourcePath(0)), 'x');
  const client = sh(side, ['-j', '2']);
  const st = spawnSync(process.execPath, [side.bin, 'server', 'status'], { cwd: side.dir, encoding: 'utf8', env });
  const m = /last command: ([\d.]+) ms wall, ([\d.]+) ms CPU/.exec(st.stdout);
  if (!m) throw new Error(`server status: no last command (did it fall back?):\n${st.stdout}${st.stderr}`);
  return { client, server: { wall: Number(m[1]), cpu: Number(m[2]) } };
}

const sides: Side[] = SPECS.map(({ engine, client }) => {
  const dir = mkdtempSync(join(tmpdir(), 'rc1-bench-ab-'));
  writeRc1Workspace(dir, makeGraph(), engine);
  const bin = join(engine, 'bin', 'rc1-build.js');
  return {
    engine,
    bin,
    command: client === 'native' ? [join(engine, 'bin', 'rc1-build')] : [process.execPath, bin],
    dir,
    client: { wall: [], cpu: [] },
    server: { wall: [], cpu: [] },
    logFrom: 0,
  };
});

console.log(
  `# served ${CHANGE ? 'one-leaf change' : 'no-op'}: A = ${ENGINES[0]} (${SPECS[0]!.client} client), B = ${ENGINES[1]} (${SPECS[1]!.client} client), ${PAIRS} pairs\n`,
);
console.log(loadNote('at start'));
try {
  for (const s of sides) sh(s, ['-j', '2'], { RC1_NO_SERVER: '1' }); // full build, in-process
  sleepMs(2200); // outside the stat cache's racy window
  for (const s of sides) sh(s, ['server', 'start']);
  for (let i = 0; i < 4; i++) for (const s of sides) served(s); // JIT warm-up
  for (const s of sides) s.logFrom = readFileSync(join(s.dir, '.rc1', 'server.log'), 'utf8').length;
  const ratios = { clientWall: [] as number[], serverWall: [] as number[], serverCpu: [] as number[] };
  for (let i = 0; i < PAIRS; i++) {
    const order = i % 2 === 0 ? [0, 1] : [1, 0];
    const got: Record<number, ReturnType<typeof served>> = {};
    for (const k of order) {
      const r = served(sides[k]!);
      got[k] = r;
      sides[k]!.client.wall.push(r.client.wall);
      sides[k]!.client.cpu.push(r.client.cpu);
      sides[k]!.server.wall.push(r.server.wall);
      sides[k]!.server.cpu.push(r.server.cpu);
    }
    ratios.clientWall.push(got[0]!.client.wall / got[1]!.client.wall);
    ratios.serverWall.push(got[0]!.server.wall / got[1]!.server.wall);
    ratios.serverCpu.push(got[0]!.server.cpu / got[1]!.server.cpu);
  }
  const c = (xs: number[]): string => {
    const s = summarize(xs);
    return `${fmtMs(s.best)} / ${fmtMs(s.median)} / ${fmtMs(Math.max(...xs))}`;
  };
  const r = (xs: number[]): string => {
    const s = [...xs].sort((a, b) => a - b);
    return `${s[0]!.toFixed(2)} / ${s[Math.floor(s.length / 2)]!.toFixed(2)} / ${s[s.length - 1]!.toFixed(2)}`;
  };
  console.log(
    table(
      ['(min / median / max)', 'client wall ms', 'client cpu ms', 'server wall ms', 'server cpu ms'],
      [
        ['A', c(sides[0]!.client.wall), c(sides[0]!.client.cpu), c(sides[0]!.server.wall), c(sides[0]!.server.cpu)],
        ['B', c(sides[1]!.client.wall), c(sides[1]!.client.cpu), c(sides[1]!.server.wall), c(sides[1]!.server.cpu)],
        ['A/B pair by pair', r(ratios.clientWall), '', r(ratios.serverWall), r(ratios.serverCpu)],
      ],
    ),
  );
  if (TIMING) {
    const phases = sides.map((s) => {
      const log = readFileSync(join(s.dir, '.rc1', 'server.log'), 'utf8').slice(s.logFrom);
      const by = new Map<string, number[]>();
      for (const m of log.matchAll(/^rc1 timing: (.+?)\s+([\d.]+) ms/gm)) {
        const k = m[1]!.trim();
        if (!by.has(k)) by.set(k, []);
        by.get(k)!.push(Number(m[2]));
      }
      return by;
    });
    const names = [...new Set([...phases[0]!.keys(), ...phases[1]!.keys()])];
    const cell = (xs: number[] | undefined): string => {
      if (!xs?.length) return '-';
      const s = [...xs].sort((a, b) => a - b);
      return `${s[0]!.toFixed(1)}–${s[s.length - 1]!.toFixed(1)} (${s[Math.floor(s.length / 2)]!.toFixed(1)})`;
    };
    console.log(
      '\n' +
        table(
          ['phase (ms: min–max (median))', 'A', 'B'],
          names.map((n) => [n, cell(phases[0]!.get(n)), cell(phases[1]!.get(n))]),
        ),
    );
  }
  console.log(`\n${loadNote('at end')}`);
} finally {
  for (const s of sides) {
    spawnSync(process.execPath, [s.bin, 'server', 'stop'], { cwd: s.dir, env });
    rmSync(s.dir, { recursive: true, force: true });
  }
}
