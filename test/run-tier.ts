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
//   node --import tsx test/run-tier.ts DIR|FILE… [--jobs N] [--reporter spec|tap|dot]
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

const OWN_PROCESS = /^\/\/ test-tier: own-process$/m;

interface Shard {
  files: string[];
  bytes: number;
}

function usage(message: string): never {
  console.error(
    `test/run-tier.ts: ${message}\nusage: node --import tsx test/run-tier.ts DIR|FILE… [--jobs N] [--reporter spec|tap|dot]`,
  );
  process.exit(2);
}

function parseArgs(argv: string[]): { files: string[]; jobs: number; reporter: string } {
  const paths: string[] = [];
  let jobs = Math.min(2, os.availableParallelism());
  let reporter = 'spec';
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--jobs' || a === '--reporter') {
      const v = argv[++i];
      if (v === undefined) usage(`${a} needs a value`);
      if (a === '--jobs') {
        jobs = Number(v);
        if (!Number.isInteger(jobs) || jobs < 1) usage(`--jobs takes a positive integer, got ${JSON.stringify(v)}`);
      } else reporter = v;
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
  return { files, jobs, reporter };
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

interface Outcome {
  shard: Shard;
  code: number;
  output: string;
  ms: number;
}

function runShard(shard: Shard, dir: string, index: number, reporter: string): Promise<Outcome> {
  const entry = path.join(dir, `shard-${index}.mjs`);
  fs.writeFileSync(entry, shard.files.map((f) => `import ${JSON.stringify(pathToFileURL(f).href)};\n`).join(''));
  const t0 = performance.now();
  return new Promise((resolve) => {
    // Run under `node --test` (the slow tier's test of this runner), NODE_TEST_CONTEXT would make the
    // child report to a parent runner in its binary protocol instead of through the reporter.
    const env: NodeJS.ProcessEnv = { ...process.env, FORCE_COLOR: process.stdout.isTTY ? '1' : '0' };
    delete env.NODE_TEST_CONTEXT;
    const child = spawn(process.execPath, ['--import', 'tsx', `--test-reporter=${reporter}`, entry], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env,
    });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.stderr.on('data', (c: Buffer) => chunks.push(c));
    child.on('close', (code, signal) => {
      resolve({
        shard,
        code: code ?? (signal ? 128 : 1),
        output: Buffer.concat(chunks).toString('utf8'),
        ms: performance.now() - t0,
      });
    });
  });
}

async function main(): Promise<void> {
  const { files, jobs, reporter } = parseArgs(process.argv.slice(2));
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
        const o = await runShard(shards[i]!, dir, i, reporter);
        outcomes.push(o);
        const rel = o.shard.files.map((f) => path.relative(process.cwd(), f));
        process.stdout.write(
          `\n# process ${i + 1} of ${shards.length} (${rel.length} file${rel.length === 1 ? '' : 's'}: ${rel.join(', ')}): exit ${o.code}, ${(o.ms / 1000).toFixed(1)} s\n${o.output}`,
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(jobs, shards.length) }, worker));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const failed = outcomes.filter((o) => o.code !== 0);
  console.log(
    `\n# ${files.length} files in ${shards.length} processes (${jobs} at a time): ${((performance.now() - t0) / 1000).toFixed(1)} s; ${
      failed.length === 0
        ? 'all passed'
        : `FAILED: process ${failed.map((o) => shards.indexOf(o.shard) + 1).join(', ')} (its output above names the failing tests)`
    }`,
  );
  process.exitCode = failed.length === 0 ? 0 : 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
