// The floor of two goals of issue 12, item 8 on this machine, measured in the same run as ninja:
// how fast is a plain Node.js build of bench/graph-workspace.ts's 1 000-target graph that does
// only the file work each of rc1-build's guarantees needs (bench/floor-build.mjs says what each
// level does)? Two cases, as in bench/build-graph.ts:
//   full build from clean — ninja -j2, the four floor levels, rc1-build (a fresh process), each
//     after its own clean, in rounds (every tool once per round, in the same order), so the disk's
//     state after the last deletions hits them alike; goal ≤ 0.8 × ninja.
//   one-leaf change (+1 byte in src/s_000.txt: 34 targets re-run) — ninja -j2, the floor server
//     answering a fresh `node` client (and its no-op), rc1-build's resident server, and
//     `node -e 0`; goal ≤ 3 × ninja.
// Every floor level's outputs are checked byte for byte against ninja's.
// Run: node --import tsx bench/floor.ts [--rounds N | --quick]   (default 5 rounds; --quick: 2)
import { spawn } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeGraph, sourcePath, writeNinjaWorkspace, writeRc1Workspace } from './graph-workspace.ts';
import {
  filesystemNote,
  fmtMs,
  loadNote,
  machineReport,
  runChild,
  sleepMs,
  summarize,
  table,
  toolVersion,
} from './util.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const FLOOR = join(REPO, 'bench', 'floor-build.mjs');
const RC1_BIN = join(REPO, 'packages', 'engine', 'bin', 'rc1-build.js');
/** What a user runs (package.json "bin"): the native client when built, else node and RC1_BIN. */
const RC1_LAUNCHER = join(REPO, 'packages', 'engine', 'bin', 'rc1-build');
const LEVELS = ['plain', 'atomic', 'cache', 'sidecar'] as const;
const i = process.argv.indexOf('--rounds');
const ROUNDS = i !== -1 ? Number(process.argv[i + 1]) : process.argv.includes('--quick') ? 2 : 5;
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error('bench/floor.ts: --rounds takes a positive integer');
const CHANGED = sourcePath(0);
const GNU_TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;

if (toolVersion('ninja') === 'not found') {
  console.log('bench/floor.ts: ninja is not installed; it is the baseline of both goals (apt-get install ninja-build)');
  process.exit(0);
}
const RC1 = existsSync(join(REPO, 'packages', 'engine', 'dist', 'cli.js'));

const graph = makeGraph();
const root = mkdtempSync(join(tmpdir(), 'rc1-floor-'));
const graphJson = join(root, 'graph.json');
writeFileSync(graphJson, JSON.stringify(graph));

/**
 * How a tool's workspace is cleaned before a full build. `delete` removes what the tool wrote, as
 * `rm -rf` would, just before the build. `move` renames it into a trash folder that is deleted
 * only after every measurement, so the build makes its files as in a fresh clone. On this disk
 * (ext4 without a journal), making a file soon after files were deleted near it costs up to ~10 ×
 * the kernel time (the inode allocator passes over the recently freed ones), so the two ways give
 * different figures, and the tool that writes more files pays more under `delete`.
 */
type CleanWay = 'delete' | 'move';

interface Col {
  label: string;
  dir: string;
  cmd: string;
  args: string[];
  /** What the tool writes, besides its outputs. */
  state: string[];
  ms: Record<CleanWay, number[]>;
  cpu: Record<CleanWay, number[]>;
}

const trash = join(root, 'trash');
mkdirSync(trash);
let trashed = 0;
function clean(c: Col, way: CleanWay): void {
  for (const p of ['out', ...c.state]) {
    const abs = join(c.dir, p);
    if (!existsSync(abs)) continue;
    if (way === 'delete') rmSync(abs, { recursive: true, force: true });
    else renameSync(abs, join(trash, String(trashed++)));
  }
  mkdirSync(join(c.dir, 'out'));
}

const cols: Col[] = [];
const col = (label: string, cmd: string, args: string[], state: string[], rc1 = false): Col => {
  const dir = join(root, label.replace(/[^a-z0-9]+/gi, '-'));
  if (rc1) writeRc1Workspace(dir, graph, join(REPO, 'packages', 'engine'));
  else writeNinjaWorkspace(dir, graph);
  const c = { label, dir, cmd, args, state, ms: { delete: [], move: [] }, cpu: { delete: [], move: [] } };
  cols.push(c);
  return c;
};
const ninja = col('ninja -j2', 'ninja', ['-j2'], ['.ninja_log']);
for (const level of LEVELS) col(`floor: ${level}`, process.execPath, [FLOOR, level, graphJson], ['.floor', 'reports']);
if (RC1) col('rc1-build', RC1_LAUNCHER, ['-j', '2'], ['.rc1', 'reports'], true);

/** Wall ms and CPU s (user + system, GNU time) of one command. */
function timed(c: Col, env: NodeJS.ProcessEnv = process.env): { ms: number; cpu: number } {
  const r = GNU_TIME
    ? runChild(GNU_TIME, ['-f', 'CPU_S=%U+%S', c.cmd, ...c.args], { cwd: c.dir, env })
    : runChild(c.cmd, c.args, { cwd: c.dir, env });
  if (r.status !== 0) throw new Error(`${c.label} exited ${r.status}: ${r.stderr.slice(-2000)}`);
  const m = /CPU_S=([\d.]+)\+([\d.]+)/.exec(r.stderr);
  return { ms: r.ms, cpu: m ? Number(m[1]) + Number(m[2]) : Number.NaN };
}

console.log(`# The floor of the full build and of the one-leaf change (bench/floor.ts), ${new Date().toISOString()}`);
console.log(machineReport());
console.log(`ninja: ${toolVersion('ninja')}; ${ROUNDS} rounds; workspaces in ${root}`);
console.log(`${filesystemNote(root)}\n`);

// Full build from clean, in rounds: every tool once a round, the two ways of cleaning alternating.
const loads: string[] = [loadNote('before the full builds')];
for (let r = 0; r < ROUNDS; r++) {
  for (const way of r % 2 === 0 ? (['delete', 'move'] as const) : (['move', 'delete'] as const)) {
    for (const c of cols) {
      clean(c, way);
      const t = timed(c, c.label === 'rc1-build' ? { ...process.env, RC1_NO_SERVER: '1' } : process.env);
      c.ms[way].push(t.ms);
      c.cpu[way].push(t.cpu);
      // ninja builds first in every round, so its outputs are there to compare with.
      if (c !== ninja) {
        const bad = graph.filter(
          (g) => !readFileSync(join(c.dir, g.output)).equals(readFileSync(join(ninja.dir, g.output))),
        );
        if (bad.length > 0)
          throw new Error(`${c.label}: ${bad.length} outputs differ from ninja's (${bad[0]!.output})`);
      }
    }
  }
}
loads.push(loadNote('after'));
rmSync(trash, { recursive: true, force: true });
for (const way of ['delete', 'move'] as const) {
  const nb = summarize(ninja.ms[way]);
  console.log(
    `## Full build from clean, the workspace cleaned by ${way === 'delete' ? 'deleting what the tool wrote, just before' : 'moving what the tool wrote aside (deleted after the bench)'} (best / median of ${ROUNDS}, ms; CPU = user + system, median)\n`,
  );
  console.log(
    table(
      ['tool', 'wall ms', 'CPU s', '× ninja (best / median)', 'goal ≤ 0.8 × ninja'],
      cols.map((c) => {
        const s = summarize(c.ms[way]);
        const rb = s.best / nb.best;
        const rm = s.median / nb.median;
        return [
          c.label,
          `${fmtMs(s.best)} / ${fmtMs(s.median)}`,
          GNU_TIME ? summarize(c.cpu[way]).median.toFixed(2) : '— (no /usr/bin/time)',
          `${rb.toFixed(2)} / ${rm.toFixed(2)}`,
          c === ninja ? '—' : rb <= 0.8 && rm <= 0.8 ? 'met' : 'NO',
        ];
      }),
    ),
  );
  console.log('');
}
console.log(`Every build's outputs are byte-identical to ninja's. ${loads.join('; ')}\n`);

// One-leaf change: ninja, the floor server with a fresh client, rc1-build's server, node -e 0.
const served = join(root, 'served');
writeNinjaWorkspace(served, graph);
const socket = join(served, 'floor.sock');
const server = spawn(process.execPath, [FLOOR, 'serve', graphJson, socket], {
  cwd: served,
  stdio: ['ignore', 'pipe', 'inherit'],
});
process.on('exit', () => server.kill());
await new Promise<void>((resolve, reject) => {
  server.stdout.on('data', (d: Buffer) => {
    if (String(d).includes('listening')) resolve();
  });
  server.on('exit', (code) => reject(new Error(`the floor server exited ${code}`)));
});
const client = {
  label: 'floor: served, fresh client',
  dir: served,
  cmd: process.execPath,
  args: [FLOOR, 'client', socket],
};
for (let k = 0; k < 3; k++) runChild(client.cmd, client.args, { cwd: served }); // warm the server's JIT (a no-op each)
runChild('ninja', ['-j2'], { cwd: ninja.dir }); // its outputs are there from the last round

// rc1-build's resident server on the same change, in its workspace of the full builds (built by the
// last round). Its stat cache does not trust a file written within ~2 s of being hashed, so each of
// its builds starts at least 2.2 s after its last one ended, as in bench/build-graph.ts.
const rc1 = cols.find((c) => c.label === 'rc1-build');
const RACY_SETTLE_MS = 2200;
let rc1LastWrite = 0;
const rc1Build = (): number => {
  sleepMs(rc1LastWrite + RACY_SETTLE_MS - performance.now());
  const r = runChild(RC1_LAUNCHER, ['-j', '2'], { cwd: rc1!.dir });
  if (r.status !== 0) throw new Error(`rc1-build exited ${r.status}: ${r.stderr.slice(-2000)}`);
  rc1LastWrite = performance.now();
  return r.ms;
};
const servedCount = (): number =>
  Number(
    /commands served: (\d+)/.exec(
      runChild(process.execPath, [RC1_BIN, 'server', 'status'], { cwd: rc1!.dir }).stdout,
    )?.[1] ?? -1,
  );
let rc1ServedBefore = 0;
let rc1Serving = false;
function stopRc1Server(): void {
  if (!rc1Serving) return;
  rc1Serving = false;
  runChild(process.execPath, [RC1_BIN, 'server', 'stop'], { cwd: rc1!.dir });
}
if (rc1) {
  const r = runChild(process.execPath, [RC1_BIN, 'server', 'start'], { cwd: rc1.dir });
  if (r.status !== 0) throw new Error(`rc1-build server start exited ${r.status}: ${r.stderr}`);
  rc1Serving = true;
  process.on('exit', stopRc1Server);
  for (let k = 0; k < 4; k++) rc1Build(); // warm its JIT; the first also settles the racy files
  rc1ServedBefore = servedCount();
}
const change: Record<string, number[]> = { ninja: [], served: [], serverPart: [], noop: [], rc1: [], node: [] };
const reran: number[] = [];
/** One served command: its wall time, and the server's own part and targets re-run from its answer. */
const serveOnce = (): { ms: number; server: number; reran: number } => {
  const s = runChild(client.cmd, client.args, { cwd: served });
  const m = /^ok (\d+) ([\d.]+)/.exec(s.stdout);
  if (s.status !== 0 || !m) throw new Error(`the floor client exited ${s.status}: ${s.stdout}${s.stderr}`);
  return { ms: s.ms, server: Number(m[2]), reran: Number(m[1]) };
};
for (let r = 0; r < ROUNDS; r++) {
  appendFileSync(join(ninja.dir, CHANGED), 'x');
  change.ninja!.push(runChild('ninja', ['-j2'], { cwd: ninja.dir }).ms);
  appendFileSync(join(served, CHANGED), 'x');
  const s = serveOnce();
  change.served!.push(s.ms);
  change.serverPart!.push(s.server);
  reran.push(s.reran);
  const noop = serveOnce();
  if (noop.reran !== 0) throw new Error(`the floor server re-ran ${noop.reran} targets in a no-op`);
  change.noop!.push(noop.ms);
  if (rc1) {
    appendFileSync(join(rc1.dir, CHANGED), 'x');
    change.rc1!.push(rc1Build());
  }
  change.node!.push(runChild(process.execPath, ['-e', '0']).ms);
  sleepMs(50);
}
server.kill();
if (rc1 && servedCount() - rc1ServedBefore !== ROUNDS)
  throw new Error(
    `rc1-build's server ran ${servedCount() - rc1ServedBefore} of the ${ROUNDS} changes (a client fell back)`,
  );
const ninjaAfter = graph.map((t) => readFileSync(join(ninja.dir, t.output)));
const bad = graph.filter((t, k) => !readFileSync(join(served, t.output)).equals(ninjaAfter[k]!));
if (bad.length > 0) throw new Error(`floor server: ${bad.length} outputs differ from ninja's after the changes`);
if (rc1) {
  const differ = graph.filter((t, k) => !readFileSync(join(rc1.dir, t.output)).equals(ninjaAfter[k]!));
  if (differ.length > 0) throw new Error(`rc1-build (server): ${differ.length} outputs differ from ninja's`);
}
const cb = summarize(change.ninja!);
console.log(`## One-leaf change (+1 byte in ${CHANGED}; best / median of ${ROUNDS}, ms)\n`);
console.log(
  table(
    ['tool', 'wall ms', '× ninja (best / median)', 'goal ≤ 3 × ninja'],
    [
      ['ninja -j2', `${fmtMs(cb.best)} / ${fmtMs(cb.median)}`, '1.00 / 1.00', '—'],
      ...(
        [
          ['floor: served, fresh client', change.served!],
          ['floor: the server part of it', change.serverPart!],
          ['floor: served no-op, fresh client', change.noop!],
          ...(rc1 ? ([['rc1-build (server)', change.rc1!]] as const) : []),
          ['node -e 0', change.node!],
        ] as const
      ).map(([label, ms]) => {
        const s = summarize([...ms]);
        const rb = s.best / cb.best;
        const rm = s.median / cb.median;
        return [
          label,
          `${fmtMs(s.best)} / ${fmtMs(s.median)}`,
          `${rb.toFixed(2)} / ${rm.toFixed(2)}`,
          label === 'floor: served, fresh client' || label === 'rc1-build (server)'
            ? rb <= 3 && rm <= 3
              ? 'met'
              : 'NO'
            : '—',
        ];
      }),
    ],
  ),
);
console.log(
  `\nThe floor server re-ran ${[...new Set(reran)].join(', ')} targets a change; its outputs${rc1 ? " and rc1-build's" : ''} are byte-identical to ninja's. ${loadNote('at the end')}`,
);
stopRc1Server();
rmSync(root, { recursive: true, force: true });
