// Where the time of a served command goes: the no-op and the one-leaf change of the 1 000-target
// graph (bench/graph-workspace.ts) run by a fresh CLI process each time (RC1_NO_SERVER=1), by
// main() again and again inside one warm process (modules loaded once, JIT warm; no client, no
// socket, rule workers started per build), and by the workspace's resident server through the
// thin client (rc1-build server start; the server's own wall and CPU per command from
// `rc1-build server status`). Rows alternate fresh, warm, served, `node -e 0`, so drift hits them
// alike. served − server = the client and the socket; server − warm main() = what the server does
// beyond main() (environment swap, frames).
// Run: npm run build && node --import tsx bench/warm-process.ts [RUNS]   (default 7)
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { appendFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { makeGraph, sourcePath, writeRc1Workspace } from './graph-workspace.ts';
import { fmtMs, loadNote, sleepMs, summarize, table } from './util.ts';

const RUNS = Number(process.argv[2] ?? 7);
const REPO = fileURLToPath(new URL('..', import.meta.url));
const ENGINE = join(REPO, 'packages', 'engine');
const BIN = join(ENGINE, 'bin', 'rc1-build.js');
if (!existsSync(join(ENGINE, 'dist', 'cli.js'))) {
  console.error('warm-process: packages/engine/dist/cli.js is missing: run `npm run build` first');
  process.exit(1);
}

const GNU_TIME = existsSync('/usr/bin/time');

/** Wall and CPU milliseconds of a child process (CPU: GNU time's user + system, 10 ms steps; NaN without it). */
function cold(
  cwd: string,
  args: string[],
  cmd = process.execPath,
  env: NodeJS.ProcessEnv = { ...process.env, RC1_NO_SERVER: '1' },
): { wall: number; cpu: number } {
  const t0 = performance.now();
  const r = GNU_TIME
    ? spawnSync('/usr/bin/time', ['-f', '%U %S', cmd, ...args], { cwd, encoding: 'utf8', env })
    : spawnSync(cmd, args, { cwd, encoding: 'utf8', env });
  const wall = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr.slice(-2000)}`);
  if (!GNU_TIME) return { wall, cpu: Number.NaN };
  const [u, s] = r.stderr.trim().split('\n').pop()!.split(' ').map(Number);
  return { wall, cpu: ((u ?? 0) + (s ?? 0)) * 1000 };
}

/** The warm process: imports the CLI once, then runs main(['-j', '2']) for each line read. */
const WARM_CHILD = `
const { main } = await import(process.argv[2]);
const { createInterface } = await import('node:readline');
const real = process.stdout.write.bind(process.stdout);
for await (const _ of createInterface({ input: process.stdin })) {
  let said = '';
  const keep = (chunk) => { said = (said + String(chunk)).slice(-4000); return true; };
  const err = process.stderr.write;
  process.stdout.write = keep;
  process.stderr.write = keep;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let code;
  try { code = await main(['-j', '2']); } finally { process.stdout.write = real; process.stderr.write = err; }
  const c = process.cpuUsage(c0);
  real(JSON.stringify({ wall: performance.now() - t0, cpu: (c.user + c.system) / 1000, code, said }) + '\\n');
}
`;

async function main(): Promise<void> {
  console.log(`# rc1-build in a warm process (${RUNS} runs per cell)\n`);
  console.log(loadNote('at start'));
  const dir = mkdtempSync(join(tmpdir(), 'rc1-bench-warm-'));
  try {
    writeRc1Workspace(dir, makeGraph(), ENGINE);
    cold(dir, [BIN, '-j', '2']); // full build
    sleepMs(2200); // outside the stat cache's racy window
    // The warm process: plain node (no tsx, like the real CLI, and its rule workers inherit
    // that), told on stdin to run one build, answering one JSON line per build.
    const script = join(dir, 'warm-child.mjs'); // a file: a worker would inherit --input-type
    writeFileSync(script, WARM_CHILD);
    const child = spawn(process.execPath, [script, pathToFileURL(join(ENGINE, 'dist', 'cli.js')).href], {
      cwd: dir,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const answers = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const warm = async (): Promise<{ wall: number; cpu: number }> => {
      child.stdin!.write('run\n');
      const a = await answers.next();
      if (a.done) throw new Error('the warm process exited');
      const r = JSON.parse(a.value) as { wall: number; cpu: number; code: number; said: string };
      if (r.code !== 0) throw new Error(`main() exited ${r.code}:\n${r.said}`);
      return r;
    };
    await warm(); // compile and warm up once
    const start = spawnSync(process.execPath, [BIN, 'server', 'start'], { cwd: dir, encoding: 'utf8' });
    if (start.status !== 0) throw new Error(`rc1-build server start: ${start.stderr}`);
    /** A served command: the client's wall and CPU, then the server's own for it. */
    const served = (): { client: { wall: number; cpu: number }; server: { wall: number; cpu: number } } => {
      const client = cold(dir, [BIN, '-j', '2'], process.execPath, process.env);
      const st = spawnSync(process.execPath, [BIN, 'server', 'status'], { cwd: dir, encoding: 'utf8' }).stdout;
      const m = /last command: ([\d.]+) ms wall, ([\d.]+) ms CPU/.exec(st);
      if (!m) throw new Error(`rc1-build server status: no last command (did it fall back?):\n${st}`);
      return { client, server: { wall: Number(m[1]), cpu: Number(m[2]) } };
    };
    for (let i = 0; i < 3; i++) served(); // its JIT warms up on a few no-ops
    const cells: Record<string, { wall: number[]; cpu: number[] }> = {};
    const add = (k: string, s: { wall: number; cpu: number }): void => {
      const c = (cells[k] ??= { wall: [], cpu: [] });
      c.wall.push(s.wall);
      c.cpu.push(s.cpu);
    };
    for (const kase of ['noop', 'change'] as const) {
      for (let i = 0; i < RUNS; i++) {
        if (kase === 'change') appendFileSync(join(dir, sourcePath(0)), 'x');
        add(`${kase} cold`, cold(dir, [BIN, '-j', '2']));
        if (kase === 'change') appendFileSync(join(dir, sourcePath(0)), 'y');
        add(`${kase} warm`, await warm());
        if (kase === 'change') appendFileSync(join(dir, sourcePath(0)), 'z');
        const s = served();
        add(`${kase} served`, s.client);
        add(`${kase} server`, s.server);
        add(`${kase} node`, cold(dir, ['-e', '0']));
      }
    }
    const cell = (k: string, f: 'wall' | 'cpu'): string => {
      if (cells[k]![f].some(Number.isNaN)) return 'n/a (no /usr/bin/time)';
      const s = summarize(cells[k]![f]);
      return `${fmtMs(s.best)} / ${fmtMs(s.median)}`;
    };
    console.log(
      table(
        [
          'case (best / median, ms)',
          'fresh CLI wall',
          'fresh CLI cpu',
          'warm main() wall',
          'warm main() cpu',
          'served wall',
          'client cpu',
          'server wall',
          'server cpu',
          'node -e 0 wall',
        ],
        (['noop', 'change'] as const).map((k) => [
          k === 'noop' ? 'no-op build' : `one-leaf change (${sourcePath(0)})`,
          cell(`${k} cold`, 'wall'),
          cell(`${k} cold`, 'cpu'),
          cell(`${k} warm`, 'wall'),
          cell(`${k} warm`, 'cpu'),
          cell(`${k} served`, 'wall'),
          cell(`${k} served`, 'cpu'),
          cell(`${k} server`, 'wall'),
          cell(`${k} server`, 'cpu'),
          cell(`${k} node`, 'wall'),
        ]),
      ),
    );
    console.log(`\n${loadNote('at end')}`);
    child.stdin!.end();
  } finally {
    spawnSync(process.execPath, [BIN, 'server', 'stop'], { cwd: dir });
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
