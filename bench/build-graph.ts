// Build-system benchmark: the same 1 000-target pipeline (bench/graph-workspace.ts) built by
// rc1-build (a fresh process per command, and served by its resident server), GNU make -j2 and
// ninja -j2, each in its own copy of the workspace, with `node -e 0` as the floor of any Node.js
// tool. The served column's workspace is built in-process first, then its server is started and
// warmed by a few no-ops before the no-op case (none of that counted); its full build is not
// measured (a build from clean removes .rc1/, and with it the server). Cases: full build from clean with rc1-build's
// transpile cache (node_modules/.cache/rc1-build) removed too, full build from clean, no-op, the no-op decided in
// full (RC1_NO_FAST_NOOP=1: what the first no-op after a change costs, the up-to-date stamp not yet written), one source changed
// by a byte, one source touched without change. rc1-build's commands run with RC1_DEBUG=fastpath, and how many of each case
// the up-to-date stamp answered (without loading the engine) is printed. Every figure is the wall time of the whole process,
// best and median of 3 (runs of all tools interleaved, so drift hits them alike). Which targets
// re-ran is read from the outputs' (mtime, inode), never from the tools' own reports.
// The rc1-build column needs the compiled engine (dist/cli.js); without it the column says so.
// Run: node --import tsx bench/build-graph.ts [--quick]   (--quick: 1 run per case instead of 3)
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hashFileSync, sha256Hex } from '../packages/engine/src/hash/hash-file.ts';
import {
  affectedBy,
  defaultTargets,
  makeGraph,
  sourcePath,
  writeMakeWorkspace,
  writeNinjaWorkspace,
  writeRc1Workspace,
} from './graph-workspace.ts';
import {
  filesystemNote,
  fmtMs,
  hasFlag,
  loadNote,
  machineReport,
  runChild,
  sleepMs,
  summarize,
  table,
  toolVersion,
  type Sample,
} from './util.ts';

const QUICK = hasFlag('--quick');
const RUNS = QUICK ? 1 : 3;
const REPO = fileURLToPath(new URL('..', import.meta.url));
const ENGINE_BUILT = existsSync(join(REPO, 'packages', 'engine', 'dist', 'cli.js'));
const RC1_BIN = join(REPO, 'packages', 'engine', 'bin', 'rc1-build.js');
/** What a user runs (package.json "bin"): the native client when built, else node and RC1_BIN. */
const RC1_LAUNCHER = join(REPO, 'packages', 'engine', 'bin', 'rc1-build');
const NATIVE_CLIENT = existsSync(join(REPO, 'packages', 'engine', 'dist', 'rc1-client'));
/** rc1-build's stat cache does not trust a file modified within ~2 s of being hashed (racy). */
const RACY_SETTLE_MS = 2200;
const CHANGED_SOURCE = sourcePath(0); // feeds the chain t_0000 → t_0100 → … → t_0900
const TOUCHED_SOURCE = sourcePath(50);
// The goals of issue 12, item 8.
const NOOP_SLACK_MS = 50;
const CHANGE_VS_NINJA = 3;
const FULL_VS_NINJA = 0.8;
/** No-ops run by the server before the measured cases (its JIT warms up on them); not counted. */
const SERVER_WARMUP = 3;

type CaseId = 'fullCold' | 'full' | 'noop' | 'noopFull' | 'change' | 'touch';
type ToolId = 'rc1' | 'rc1s' | 'make' | 'ninja' | 'node';
// fullCold first: the workspace is new, so its first build finds no transpile cache either; the
// full builds after it find the one the last cold build left (as a user's build after rm -rf .rc1).
const CASES: { id: CaseId; label: string }[] = [
  { id: 'fullCold', label: 'full build from clean, transpile cache removed too' },
  { id: 'full', label: 'full build from clean' },
  { id: 'noop', label: 'no-op build' },
  { id: 'noopFull', label: 'no-op, decided in full (RC1_NO_FAST_NOOP=1)' },
  { id: 'change', label: `one-leaf change (+1 byte in ${CHANGED_SOURCE})` },
  { id: 'touch', label: `touch without change (${TOUCHED_SOURCE})` },
];

const isFull = (c: CaseId): boolean => c === 'full' || c === 'fullCold';

interface Tool {
  id: ToolId;
  label: string;
  dir: string;
  cmd: string;
  args: string[];
  /** Why this tool is not measured, or null when it is. */
  skip: string | null;
  /** The first failure; later cases are not run. */
  failed: string | null;
  clean(): void;
  samples: Partial<Record<CaseId, number[]>>;
  reran: Partial<Record<CaseId, number[]>>;
}

const graph = makeGraph();
const outputs = graph.map((t) => t.output);
const expectedReran: Record<CaseId, { make: number; ninja: number; rc1: number; rc1s: number }> = {
  fullCold: { make: graph.length, ninja: graph.length, rc1: graph.length, rc1s: graph.length },
  full: { make: graph.length, ninja: graph.length, rc1: graph.length, rc1s: graph.length },
  noop: { make: 0, ninja: 0, rc1: 0, rc1s: 0 },
  noopFull: { make: 0, ninja: 0, rc1: 0, rc1s: 0 },
  change: {
    make: affectedBy(graph, CHANGED_SOURCE).size,
    ninja: affectedBy(graph, CHANGED_SOURCE).size,
    rc1: affectedBy(graph, CHANGED_SOURCE).size,
    rc1s: affectedBy(graph, CHANGED_SOURCE).size,
  },
  touch: {
    make: affectedBy(graph, TOUCHED_SOURCE).size,
    ninja: affectedBy(graph, TOUCHED_SOURCE).size,
    rc1: 0,
    rc1s: 0,
  },
};

/** (mtime, inode) of every output: a target re-ran iff its output's pair changed. */
function snapshot(dir: string): string[] {
  return outputs.map((o) => {
    const st = statSync(join(dir, o), { bigint: true, throwIfNoEntry: false });
    return st ? `${st.mtimeNs}:${st.ino}` : 'missing';
  });
}

const countChanged = (before: string[], after: string[]): number => before.filter((b, i) => b !== after[i]).length;

/** One digest over every output (path and content), to check that the tools did the same work. */
function treeDigest(dir: string): string {
  return sha256Hex(
    outputs.map((o) => `${o} ${existsSync(join(dir, o)) ? hashFileSync(join(dir, o)) : 'missing'}`).join('\n'),
  );
}

function rmOutputs(dir: string): void {
  for (const o of outputs) rmSync(join(dir, o), { force: true });
}

function makeTools(root: string): Tool[] {
  const tool = (
    id: ToolId,
    label: string,
    cmd: string,
    args: string[],
    skip: string | null,
    clean: (dir: string) => void,
  ): Tool => {
    const dir = join(root, id);
    return { id, label, dir, cmd, args, skip, failed: null, clean: () => clean(dir), samples: {}, reran: {} };
  };
  const installed = (cmd: string): string | null =>
    toolVersion(cmd) === 'not found' ? `n/a (${cmd} not installed)` : null;
  const rc1Clean = (dir: string): void => {
    rmOutputs(dir);
    rmSync(join(dir, '.rc1'), { recursive: true, force: true });
    rmSync(join(dir, 'reports'), { recursive: true, force: true });
  };
  return [
    tool('rc1', 'rc1-build', RC1_LAUNCHER, ['-j', '2'], ENGINE_BUILT ? null : 'n/a (engine not built)', rc1Clean),
    tool(
      'rc1s',
      'rc1-build (server)',
      RC1_LAUNCHER,
      ['-j', '2'],
      ENGINE_BUILT ? null : 'n/a (engine not built)',
      rc1Clean,
    ),
    tool('make', 'make -j2', 'make', ['-j2'], installed('make'), rmOutputs),
    tool('ninja', 'ninja -j2', 'ninja', ['-j2'], installed('ninja'), (dir) => {
      rmOutputs(dir);
      rmSync(join(dir, '.ninja_log'), { force: true });
      rmSync(join(dir, '.ninja_deps'), { force: true });
    }),
    tool('node', 'node -e 0', process.execPath, ['-e', '0'], null, () => {}),
  ];
}

/**
 * rc1-build's commands run with RC1_DEBUG=fastpath (its server is started with it too: a pinned
 * variable), so each says on stderr whether the up-to-date stamp answered it; counted per case.
 */
const RC1_ENV = { RC1_DEBUG: 'fastpath' };
const STAMP_ANSWER = /^rc1 fastpath: answered from/m;
const stampAnswers: Partial<Record<CaseId, { rc1: number; rc1s: number }>> = {};
let currentCase: CaseId | null = null;
/** The served column's extra no-op, when the stamp answered it (not served). */
let extraFromStamp = 0;

/** Runs a tool once in its workspace; returns wall ms and how many targets re-ran. */
function runOnce(
  t: Tool,
  extraArgs: string[] = [],
  extraEnv: Record<string, string> = {},
): { ms: number; reran: number; stdout: string; stderr: string } {
  const before = t.id === 'node' ? [] : snapshot(t.dir);
  const r = runChild(t.cmd, [...t.args, ...extraArgs], {
    cwd: t.id === 'node' ? REPO : t.dir,
    // The fresh-process column never meets a server; the served one must not fall back (checked in servedCount).
    env:
      t.id === 'rc1'
        ? { ...process.env, ...RC1_ENV, RC1_NO_SERVER: '1', ...extraEnv }
        : t.id === 'rc1s'
          ? { ...process.env, ...RC1_ENV, ...extraEnv }
          : process.env,
  });
  if ((t.id === 'rc1' || t.id === 'rc1s') && currentCase && STAMP_ANSWER.test(r.stderr))
    (stampAnswers[currentCase] ??= { rc1: 0, rc1s: 0 })[t.id]++;
  if (r.status !== 0) {
    throw new Error(
      `${t.label} exited ${r.status}\n${(r.stderr || r.stdout).trim().split('\n').slice(-15).join('\n')}`,
    );
  }
  lastCommandEnd = performance.now();
  const reran = t.id === 'node' ? 0 : countChanged(before, snapshot(t.dir));
  return { ms: r.ms, reran, stdout: r.stdout, stderr: r.stderr };
}

let rc1LastWrite = 0;
/** When the last command of any tool ended (runOnce). */
let lastCommandEnd = 0;
/** Commands the served column's server ran (rc1-build server status), to check none fell back. */
function servedCount(t: Tool): number {
  const m = /commands served: (\d+)/.exec(
    runChild(process.execPath, [RC1_BIN, 'server', 'status'], { cwd: t.dir }).stdout,
  );
  return m ? Number(m[1]) : -1;
}
let servedAtStart = 0;

/** The served column: built in-process, then its server started and warmed (none of it measured). */
function startServer(t: Tool): void {
  runOnce(t); // a build from clean, in-process (no server yet)
  const r = runChild(process.execPath, [RC1_BIN, 'server', 'start'], {
    cwd: t.dir,
    env: { ...process.env, ...RC1_ENV },
  });
  if (r.status !== 0) throw new Error(`rc1-build server start exited ${r.status}: ${r.stderr}`);
  settleRc1();
  for (let i = 0; i < SERVER_WARMUP; i++) runOnce(t);
  servedAtStart = servedCount(t);
}

function stopServer(t: Tool): void {
  runChild(process.execPath, [RC1_BIN, 'server', 'stop'], { cwd: t.dir });
}
/** Waits until rc1-build's last writes are outside its racy window, so its stat cache holds. */
function settleRc1(): void {
  sleepMs(rc1LastWrite + RACY_SETTLE_MS - performance.now());
}
/**
 * The idle every tool's run in the edit cases starts from: RACY_SETTLE_MS since the last command
 * of any tool (at least rc1-build's settle, and the seconds a user takes between an edit and the
 * build). Each tool gets the same: on a virtual machine a process started after seconds of idle
 * pays tens of ms that one started right after another command does not (bench/results/speed.md,
 * twenty-second pass), so a tool run after an idle must not be compared with one run without.
 */
function idleLikeAUser(): void {
  sleepMs(Math.max(lastCommandEnd, rc1LastWrite) + RACY_SETTLE_MS - performance.now());
}

function prepare(t: Tool, c: CaseId, run: number): void {
  switch (c) {
    case 'fullCold':
      t.clean();
      // rc1-build's copy of its compiled code outside .rc1 (packages/engine/src/config/compiled-seed.ts)
      if (t.id === 'rc1' || t.id === 'rc1s')
        rmSync(join(t.dir, 'node_modules', '.cache'), { recursive: true, force: true });
      return;
    case 'full':
      t.clean();
      return;
    case 'noopFull':
      return;
    case 'noop':
      if (t.id === 'rc1s' && run === 0) startServer(t);
      if ((t.id === 'rc1' || t.id === 'rc1s') && run === 0) {
        settleRc1();
        // The extra no-op: re-hashes the racy files once, records them as settled (and leaves the up-to-date stamp).
        if (t.id === 'rc1s' && STAMP_ANSWER.test(runOnce(t).stderr)) extraFromStamp++;
        else if (t.id === 'rc1') runOnce(t);
      }
      return;
    case 'change':
      appendFileSync(join(t.dir, CHANGED_SOURCE), 'x');
      idleLikeAUser();
      return;
    case 'touch': {
      idleLikeAUser();
      const now = new Date();
      utimesSync(join(t.dir, TOUCHED_SOURCE), now, now);
      return;
    }
  }
}

function measure(tools: Tool[]): void {
  for (const { id: c } of CASES) {
    for (let run = 0; run < RUNS; run++) {
      for (const t of tools) {
        if (t.skip || t.failed) continue;
        if (t.id === 'rc1s' && (c === 'full' || c === 'fullCold')) continue; // in-process: the rc1-build column
        try {
          if (t.id !== 'node') prepare(t, c, run);
          else if (c === 'change' || c === 'touch') idleLikeAUser(); // the same idle as the tools it stands beside
          currentCase = c;
          const r = runOnce(t, [], c === 'noopFull' ? { RC1_NO_FAST_NOOP: '1' } : {});
          currentCase = null;
          (t.samples[c] ??= []).push(r.ms);
          (t.reran[c] ??= []).push(r.reran);
          if ((t.id === 'rc1' || t.id === 'rc1s') && (c === 'full' || c === 'fullCold' || c === 'change'))
            rc1LastWrite = performance.now();
        } catch (e) {
          t.failed = `${CASES.find((x) => x.id === c)!.label}: ${(e as Error).message}`;
        }
      }
    }
  }
}

/** After a touch, what rc1-build re-read: from its --json events and, if strace exists, from open(2) calls. */
function rc1TouchAudit(t: Tool): string[] {
  const notes: string[] = [];
  const touched = join(t.dir, TOUCHED_SOURCE);
  const touch = (): void => {
    settleRc1();
    const now = new Date();
    utimesSync(touched, now, now);
  };
  touch();
  const json = runChild(t.cmd, [...t.args, '--json'], { cwd: t.dir });
  const events = json.stdout
    .split('\n')
    .filter((l) => l.trim().startsWith('{'))
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as Record<string, unknown>];
      } catch {
        return [];
      }
    })
    .filter((e) => typeof e.event === 'string');
  if (json.status !== 0 || events.length === 0) {
    notes.push(`rc1-build --json: not available (exit ${json.status}, ${events.length} events); --json check skipped`);
  } else {
    const started = events.filter((e) => e.event === 'start').length;
    const skipped = events.filter((e) => e.event === 'skip').length;
    notes.push(
      `rc1-build --json after a touch: ${started} start events, ${skipped} skip events (want 0 starts): ${started === 0 ? 'ok' : 'NOT OK'}`,
    );
    const hashed = new Set<string>();
    const walk = (v: unknown, key: string): void => {
      if (Array.isArray(v)) {
        if (/hashed/i.test(key)) for (const x of v) if (typeof x === 'string') hashed.add(x);
        v.forEach((x) => walk(x, key));
      } else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k);
    };
    events.forEach((e) => walk(e, ''));
    const workspaceFiles = [...hashed].filter((p) => /(^|\/)(src|out)\//.test(p));
    notes.push(
      hashed.size === 0
        ? 'rc1-build --json: events list no hashed files; re-read check by --json skipped'
        : `rc1-build --json: re-hashed workspace files: ${workspaceFiles.join(', ') || 'none'} (want only ${TOUCHED_SOURCE}): ${workspaceFiles.length === 1 && workspaceFiles[0]!.endsWith(TOUCHED_SOURCE) ? 'ok' : 'NOT OK'}`,
    );
  }
  if (toolVersion('strace', ['-V']) === 'not found') {
    notes.push('strace not installed: open(2) check skipped');
    return notes;
  }
  touch();
  const trace = join(t.dir, '..', 'rc1-touch.strace');
  const st = runChild('strace', ['-f', '-qq', '-e', 'trace=open,openat', '-o', trace, t.cmd, ...t.args], {
    cwd: t.dir,
  });
  if (st.status !== 0) {
    notes.push(`strace run failed (exit ${st.status}): open(2) check skipped`);
    return notes;
  }
  const opened = new Set<string>();
  for (const line of readFileSync(trace, 'utf8').split('\n')) {
    const m = /open(?:at)?\([^"]*"([^"]+)"[^)]*\)\s*=\s*\d+/.exec(line);
    if (!m) continue;
    const p = m[1]!.startsWith('/') ? m[1]! : join(t.dir, m[1]!);
    for (const sub of ['src/', 'out/']) if (p.startsWith(join(t.dir, sub))) opened.add(p.slice(t.dir.length + 1));
  }
  const list = [...opened].sort();
  notes.push(
    `rc1-build after a touch opened (strace, src/ and out/): ${list.join(', ') || 'nothing'} (want only ${TOUCHED_SOURCE}): ${list.length === 1 && list[0] === TOUCHED_SOURCE ? 'ok' : 'NOT OK'}`,
  );
  return notes;
}

function cell(t: Tool, c: CaseId): string {
  if (t.skip) return t.skip;
  const runs = t.samples[c];
  if (!runs || runs.length < RUNS) return t.failed ? 'failed (see below)' : 'not run';
  const s: Sample = summarize(runs);
  return `${fmtMs(s.best)} / ${fmtMs(s.median)}`;
}

function report(tools: Tool[]): void {
  const [rc1, rc1s, make, ninja, node] = tools as [Tool, Tool, Tool, Tool, Tool];
  const best = (t: Tool, c: CaseId): number | undefined => {
    const r = t.samples[c];
    return r && r.length === RUNS && !t.skip ? summarize(r).best : undefined;
  };
  const reranAll = (t: Tool, c: CaseId, want: number): boolean | undefined => {
    const r = t.reran[c];
    return r && r.length === RUNS && !t.skip ? r.every((n) => n === want) : undefined;
  };
  const yes = (v: boolean | undefined): string => (v === undefined ? 'n/a' : v ? 'yes' : 'NO');
  const atMost = (t: Tool, c: CaseId, bound: number | undefined): boolean | undefined => {
    const b = best(t, c);
    return b !== undefined && bound !== undefined ? b <= bound : undefined;
  };
  const ninjaTimes = (c: CaseId, k: number): number | undefined =>
    best(ninja, c) === undefined ? undefined : best(ninja, c)! * k;
  const nodePlus = best(node, 'noop') === undefined ? undefined : best(node, 'noop')! + NOOP_SLACK_MS;
  const both = (a: boolean | undefined, b: boolean | undefined): boolean | undefined =>
    a === undefined || b === undefined ? undefined : a && b;
  // Per case: the goal, and whether the fresh process and the served command meet it.
  const goals: Record<CaseId, [string, boolean | undefined, boolean | undefined]> = {
    fullCold: [
      `(reported) ≤ ${FULL_VS_NINJA} × ninja`,
      atMost(rc1, 'fullCold', ninjaTimes('fullCold', FULL_VS_NINJA)),
      undefined,
    ],
    full: [`≤ ${FULL_VS_NINJA} × ninja`, atMost(rc1, 'full', ninjaTimes('full', FULL_VS_NINJA)), undefined],
    noop: [`≤ node -e 0 + ${NOOP_SLACK_MS} ms`, atMost(rc1, 'noop', nodePlus), atMost(rc1s, 'noop', nodePlus)],
    noopFull: [
      `≤ node -e 0 + ${NOOP_SLACK_MS} ms`,
      atMost(rc1, 'noopFull', nodePlus),
      atMost(rc1s, 'noopFull', nodePlus),
    ],
    change: [
      `≤ ${CHANGE_VS_NINJA} × ninja, re-runs only the ${expectedReran.change.rc1} affected`,
      both(
        atMost(rc1, 'change', ninjaTimes('change', CHANGE_VS_NINJA)),
        reranAll(rc1, 'change', expectedReran.change.rc1),
      ),
      both(
        atMost(rc1s, 'change', ninjaTimes('change', CHANGE_VS_NINJA)),
        reranAll(rc1s, 'change', expectedReran.change.rc1s),
      ),
    ],
    touch: ['runs no target', reranAll(rc1, 'touch', 0), reranAll(rc1s, 'touch', 0)],
  };
  const served = (c: CaseId): string => (isFull(c) ? 'in-process (see note)' : cell(rc1s, c));
  console.log(
    table(
      [
        'case (best / median of ' + RUNS + ', ms)',
        'rc1-build',
        'rc1-build (server)',
        'make -j2',
        'ninja -j2',
        'node -e 0',
        'goal',
        'met: fresh / server',
      ],
      CASES.map(({ id, label }) => [
        label,
        cell(rc1, id),
        served(id),
        cell(make, id),
        cell(ninja, id),
        cell(node, id),
        goals[id][0],
        `${yes(goals[id][1])} / ${isFull(id) ? 'n/a' : yes(goals[id][2])}`,
      ]),
    ),
  );
  console.log(
    `\nrc1-build: a fresh process per command (RC1_NO_SERVER=1). rc1-build (server): the same command line through the thin client to the workspace's resident server (rc1-build server start), started after an in-process build from clean and warmed by ${SERVER_WARMUP} + 1 no-ops, none of it counted; its full build is n/a (a build from clean removes .rc1/ and the server with it: the rc1-build column is that case).`,
  );
  console.log(
    `\nedit cases (one-leaf change, touch): every tool's run starts ${RACY_SETTLE_MS} ms after the last command of any tool ended (the edit made meanwhile), as a user's build comes seconds after the edit: the same idle for each tool, which on a virtual machine costs a process started after it tens of ms.`,
  );
  const answered = CASES.filter(({ id }) => !isFull(id))
    .map(({ id, label }) => {
      const a = stampAnswers[id] ?? { rc1: 0, rc1s: 0 };
      return `${label}: ${a.rc1} / ${a.rc1s}`;
    })
    .join('; ');
  console.log(
    `\nanswered from the up-to-date stamp, without loading the engine (rc1-build / rc1-build (server), of ${RUNS} each): ${answered}. Every other rc1-build command decided in full.`,
  );
  console.log('\ntargets re-run per run (outputs whose mtime or inode changed; expected in brackets):\n');
  const reranCell = (t: Tool, c: CaseId): string => {
    if (t.skip) return t.skip;
    const r = t.reran[c];
    const want = expectedReran[c][t.id as 'rc1' | 'rc1s' | 'make' | 'ninja'];
    return r && r.length > 0 ? `${r.join(', ')} [${want}]${r.every((n) => n === want) ? '' : ' ≠'}` : 'not run';
  };
  console.log(
    table(
      ['case', 'rc1-build', 'rc1-build (server)', 'make -j2', 'ninja -j2'],
      CASES.map(({ id, label }) => [
        label,
        reranCell(rc1, id),
        isFull(id) ? 'n/a' : reranCell(rc1s, id),
        reranCell(make, id),
        reranCell(ninja, id),
      ]),
    ),
  );
  for (const t of tools) if (t.failed) console.log(`\n${t.label} failed in ${t.failed}`);
}

/**
 * What an idle costs the next piece of work on this machine, the reason the edit cases give every
 * tool the same idle: one JSON.parse of a ~150 KB text (the size of rc1-build's stat cache) right
 * after another, and as the first work after RACY_SETTLE_MS of sleep.
 */
function idleNote(): string {
  const text = JSON.stringify(
    Object.fromEntries(
      Array.from({ length: 1100 }, (_, i) => [
        `out/t_${i}.txt`,
        [i, String(i * 1e9), String(i), 'f'.repeat(64), 0, '0'],
      ]),
    ),
  );
  const task = (): number => {
    const t = performance.now();
    JSON.parse(text);
    return performance.now() - t;
  };
  for (let i = 0; i < 20; i++) task();
  const busy = summarize(Array.from({ length: 5 }, task)).median;
  const afterIdle: number[] = [];
  for (let i = 0; i < 3; i++) {
    sleepMs(RACY_SETTLE_MS);
    afterIdle.push(task());
  }
  return (
    `idle on this machine: one JSON.parse of ${Math.round(text.length / 1024)} KB takes ${fmtMs(busy)} ms right after another ` +
    `(median of 5) and ${afterIdle.map(fmtMs).join(', ')} ms as the first work after ${RACY_SETTLE_MS} ms of sleep`
  );
}

function main(): void {
  console.log(`# rc1-build build-graph benchmark${QUICK ? ' (--quick)' : ''}\n`);
  console.log(machineReport());
  console.log(
    `${toolVersion('make')}; ninja ${toolVersion('ninja')}; rc1-build: ${ENGINE_BUILT ? `dist/cli.js via ${RC1_LAUNCHER} (${NATIVE_CLIENT ? 'the native client, dist/rc1-client: node only where the command runs in-process' : 'no native client built: node and bin/rc1-build.js'})` : 'engine not built (no dist/cli.js)'}`,
  );
  console.log(
    `graph: ${graph.length} targets in 10 layers, ${defaultTargets(graph).length} default targets; ` +
      `a +1 byte change of ${CHANGED_SOURCE} re-runs ${expectedReran.change.make}, a touch of ${TOUCHED_SOURCE} ${expectedReran.touch.make} (mtime tools)\n`,
  );
  const root = mkdtempSync(join(tmpdir(), 'rc1-bench-graph-'));
  console.log(`${filesystemNote(root)}\n`);
  console.log(`${idleNote()}\n`);
  const cleanup = (): void => rmSync(root, { recursive: true, force: true });
  process.once('SIGINT', () => {
    cleanup();
    process.exit(130);
  });
  try {
    const tools = makeTools(root);
    const [rc1, rc1s, make, ninja] = tools as [Tool, Tool, Tool, Tool, Tool];
    writeRc1Workspace(rc1.dir, graph, join(REPO, 'packages', 'engine'));
    writeRc1Workspace(rc1s.dir, graph, join(REPO, 'packages', 'engine'));
    writeMakeWorkspace(make.dir, graph);
    writeNinjaWorkspace(ninja.dir, graph);
    try {
      measure(tools);
    } finally {
      if (!rc1s.skip) {
        const n = servedCount(rc1s);
        const fromStamp = Object.values(stampAnswers).reduce((a, x) => a + x.rc1s, 0);
        const want =
          CASES.filter((c) => c.id !== 'full' && c.id !== 'fullCold').length * RUNS + 1 - fromStamp - extraFromStamp;
        if (n >= 0)
          console.log(
            `served commands in the measured cases: ${n - servedAtStart} (want ${want}: the ${RUNS} runs of each case and the extra no-op, less the ${fromStamp + extraFromStamp} the up-to-date stamp answered): ${n - servedAtStart === want ? 'ok' : 'NOT OK'}`,
          );
        stopServer(rc1s);
      }
    }
    report(tools);
    const built = [rc1, rc1s, make, ninja].filter((t) => !t.skip && !t.failed);
    const digests = new Set(built.map((t) => treeDigest(t.dir)));
    console.log(
      `\noutputs byte-identical across ${built.map((t) => t.label).join(', ')}: ${digests.size === 1 ? 'yes' : 'NO'}`,
    );
    if (!rc1.skip && !rc1.failed) for (const n of rc1TouchAudit(rc1)) console.log(n);
    console.log(`\n${loadNote('at end')}`);
  } finally {
    cleanup();
  }
}

main();
