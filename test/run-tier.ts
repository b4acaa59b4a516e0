// Runs a tier of test files (`npm run test:fast`: test/unit) in a few long-lived Node processes
// instead of one per file. `node --test` starts a Node process, the tsx loader (with its hooks
// thread) and the whole import graph of lib/ for every one of the tier's files; here each process
// (one per CPU, at most --jobs) loads its share of the files once, by static imports from one
// entry module, so every file's top-level test(), before() and after() calls are registered before
// any test starts. Files are dealt to the processes by size, largest first, each to the process
// with the fewest bytes so far (the same split on every run). A file that must have a process of
// its own says so on a line of its own: `// test-tier: own-process`.
// Each process's output (the spec reporter's) is printed whole when it ends, then a summary; the
// exit status is non-zero when any process failed.
// A process passes only when its exit status is 0 AND its machine-readable report (a second
// reporter, test/tier-reporter.ts, writing to a file) ends with the run's summary saying fail 0 and
// cancelled 0, and every one of its files reported at least one test: a test file that calls
// process.exit() (at once or from a timer) ends the process before the summary, and one that sets
// `process.exitCode = 0` after a failure makes the status lie; neither passes. A process still
// running after --timeout-s seconds (default 600, or RC1_TEST_TIER_TIMEOUT_S) is killed and fails,
// naming its files (a leaked handle keeps a process alive after its tests); one running longer than
// a minute is named every minute while it runs.
//   node --import tsx test/run-tier.ts DIR|FILE… [--jobs N] [--reporter spec|tap|dot] [--timeout-s S]
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

// A line of its own, LF or CRLF (a JavaScript multiline `$` also matches before a CR).
export const OWN_PROCESS = /^\/\/ test-tier: own-process[ \t]*\r?$/m;
const REPORTER = pathToFileURL(path.join(import.meta.dirname, 'tier-reporter.ts')).href;
const USAGE = 'node --import tsx test/run-tier.ts DIR|FILE… [--jobs N] [--reporter spec|tap|dot] [--timeout-s S]';

interface Shard {
  files: string[];
  bytes: number;
}

function usage(message: string): never {
  console.error(`test/run-tier.ts: ${message}\nusage: ${USAGE}`);
  process.exit(2);
}

function seconds(v: string, what: string): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n <= 0)
    usage(`${what} takes a positive number of seconds, got ${JSON.stringify(v)}`);
  return n;
}

function parseArgs(argv: string[]): { files: string[]; jobs: number; reporter: string; timeoutS: number } {
  const paths: string[] = [];
  let jobs = Math.min(2, os.availableParallelism());
  let reporter = 'spec';
  const envTimeout = process.env.RC1_TEST_TIER_TIMEOUT_S;
  let timeoutS = envTimeout === undefined ? 600 : seconds(envTimeout, 'RC1_TEST_TIER_TIMEOUT_S');
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--jobs' || a === '--reporter' || a === '--timeout-s') {
      const v = argv[++i];
      if (v === undefined) usage(`${a} needs a value`);
      if (a === '--jobs') {
        jobs = Number(v);
        if (!Number.isInteger(jobs) || jobs < 1) usage(`--jobs takes a positive integer, got ${JSON.stringify(v)}`);
      } else if (a === '--timeout-s') timeoutS = seconds(v, '--timeout-s');
      else reporter = v;
    } else if (a.startsWith('--')) usage(`unknown option ${a}`);
    else paths.push(a);
  }
  if (paths.length === 0) usage('name a directory of *.test.ts files or test files');
  const files = paths.flatMap((p) => {
    if (!fs.existsSync(p)) usage(`${p} does not exist`);
    if (!fs.statSync(p).isDirectory()) return [path.resolve(p)];
    return fs
      .readdirSync(p)
      .filter((f) => f.endsWith('.test.ts'))
      .sort()
      .map((f) => path.resolve(p, f));
  });
  if (files.length === 0) usage(`no *.test.ts file in ${paths.join(', ')}`);
  return { files, jobs, reporter, timeoutS };
}

/** Shared shards (largest file first, to the lightest shard), then one shard per own-process file. */
export function planShards(files: readonly { file: string; bytes: number; own: boolean }[], jobs: number): Shard[] {
  const shared: Shard[] = Array.from({ length: Math.min(jobs, files.filter((f) => !f.own).length) }, () => ({
    files: [],
    bytes: 0,
  }));
  const byBytes = files.filter((f) => !f.own).sort((a, b) => b.bytes - a.bytes || a.file.localeCompare(b.file));
  for (const f of byBytes) {
    const lightest = shared.reduce((m, s) => (s.bytes < m.bytes ? s : m), shared[0]!);
    lightest.files.push(f.file);
    lightest.bytes += f.bytes;
  }
  for (const s of shared) s.files.sort();
  return [...shared, ...files.filter((f) => f.own).map((f) => ({ files: [f.file], bytes: f.bytes }))];
}

/**
 * What a process's report (test/tier-reporter.ts's JSON lines) says is wrong, [] when nothing: the
 * summary is missing (the process ended before its tests did), it counts failed or cancelled
 * tests, or one of the process's files reported no test at all.
 */
export function reportProblems(files: readonly string[], report: string): string[] {
  const summary = new Map<string, number>();
  const reported = new Set<string>();
  for (const line of report.split('\n')) {
    if (line.trim() === '') continue;
    let e: { type?: string; file?: unknown; message?: unknown };
    try {
      e = JSON.parse(line);
    } catch {
      continue; // a line cut short by an early exit
    }
    if ((e.type === 'pass' || e.type === 'fail') && typeof e.file === 'string') reported.add(e.file);
    const m = e.type === 'diagnostic' && typeof e.message === 'string' ? /^(\w+) ([\d.]+)$/.exec(e.message) : null;
    if (m) summary.set(m[1]!, Number(m[2]));
  }
  const problems: string[] = [];
  const complete = ['tests', 'pass', 'fail', 'cancelled', 'duration_ms'].every((k) => summary.has(k));
  if (!complete) {
    problems.push(
      'it ended without the test summary: a test file ended the process early (process.exit(), a crash), so some tests may not have run',
    );
  } else {
    if (summary.get('fail')! > 0) problems.push(`${summary.get('fail')} test(s) failed`);
    if (summary.get('cancelled')! > 0) problems.push(`${summary.get('cancelled')} test(s) cancelled`);
  }
  const silent = files.filter((f) => !reported.has(f));
  if (silent.length > 0)
    problems.push(`no test reported by ${silent.map((f) => path.relative(process.cwd(), f)).join(', ')}`);
  return problems;
}

interface Outcome {
  shard: Shard;
  code: number;
  problems: string[];
  output: string;
  ms: number;
}

function runShard(shard: Shard, dir: string, index: number, reporter: string, timeoutS: number): Promise<Outcome> {
  const entry = path.join(dir, `shard-${index}.mjs`);
  const report = path.join(dir, `shard-${index}.jsonl`);
  fs.writeFileSync(entry, shard.files.map((f) => `import ${JSON.stringify(pathToFileURL(f).href)};\n`).join(''));
  const t0 = performance.now();
  const rel = shard.files.map((f) => path.relative(process.cwd(), f)).join(', ');
  return new Promise((resolve) => {
    // Run under `node --test` (the slow tier's test of this runner), NODE_TEST_CONTEXT would make the
    // child report to a parent runner in its binary protocol instead of through the reporter.
    const env: NodeJS.ProcessEnv = { ...process.env, FORCE_COLOR: process.stdout.isTTY ? '1' : '0' };
    delete env.NODE_TEST_CONTEXT;
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        `--test-reporter=${reporter}`,
        '--test-reporter-destination=stdout',
        `--test-reporter=${REPORTER}`,
        `--test-reporter-destination=${report}`,
        entry,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env },
    );
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.stderr.on('data', (c: Buffer) => chunks.push(c));
    let timedOut = false;
    const kill = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
      // A process it started may hold the pipes open; 'close' must not wait for it.
      child.stdout.destroy();
      child.stderr.destroy();
    }, timeoutS * 1000);
    const minutes = setInterval(() => {
      process.stdout.write(
        `# process ${index + 1} still running after ${((performance.now() - t0) / 60000).toFixed(0)} min: ${rel}\n`,
      );
    }, 60_000);
    child.on('close', (code, signal) => {
      clearTimeout(kill);
      clearInterval(minutes);
      const exit = code ?? (signal ? 128 : 1);
      const problems = timedOut
        ? [
            `killed after ${timeoutS} s (--timeout-s): a test hangs or leaves a handle open (a timer, a server, a child)`,
          ]
        : reportProblems(shard.files, fs.existsSync(report) ? fs.readFileSync(report, 'utf8') : '');
      if (!timedOut && exit !== 0) problems.unshift(`exit status ${code ?? `signal ${signal}`}`);
      resolve({
        shard,
        code: exit,
        problems,
        output: Buffer.concat(chunks).toString('utf8'),
        ms: performance.now() - t0,
      });
    });
  });
}

async function main(): Promise<void> {
  const { files, jobs, reporter, timeoutS } = parseArgs(process.argv.slice(2));
  const shards = planShards(
    files.map((file) => {
      const text = fs.readFileSync(file, 'utf8');
      return { file, bytes: text.length, own: OWN_PROCESS.test(text) };
    }),
    jobs,
  );
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-test-tier-'));
  const t0 = performance.now();
  const outcomes: Outcome[] = [];
  try {
    // At most `jobs` processes at a time; the shared shards first.
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < shards.length) {
        const i = next++;
        const o = await runShard(shards[i]!, dir, i, reporter, timeoutS);
        outcomes.push(o);
        const rel = o.shard.files.map((f) => path.relative(process.cwd(), f));
        process.stdout.write(
          `\n# process ${i + 1} of ${shards.length} (${rel.length} file${rel.length === 1 ? '' : 's'}: ${rel.join(', ')}): exit ${o.code}, ${(o.ms / 1000).toFixed(1)} s\n${o.output}${o.problems.map((p) => `# process ${i + 1} FAILED: ${p}\n`).join('')}`,
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(jobs, shards.length) }, worker));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const failed = outcomes
    .filter((o) => o.problems.length > 0)
    .sort((a, b) => shards.indexOf(a.shard) - shards.indexOf(b.shard));
  console.log(
    `\n# ${files.length} files in ${shards.length} processes (${jobs} at a time): ${((performance.now() - t0) / 1000).toFixed(1)} s; ${
      failed.length === 0
        ? 'all passed'
        : `FAILED: ${failed
            .map(
              (o) =>
                `process ${shards.indexOf(o.shard) + 1} (${o.shard.files.map((f) => path.relative(process.cwd(), f)).join(', ')}): ${o.problems.join('; ')}`,
            )
            .join('; ')} (its output above names the failing tests)`
    }`,
  );
  process.exitCode = failed.length === 0 ? 0 : 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
