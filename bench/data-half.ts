// Benchmark of the RC1 data half through the real CLI: shadow_set, diversity_report, seed_pool,
// pool_validation, difficulty_metrics, balanced_pool and difficulty_report, built from nothing in
// a copy of the project at n = 1 000, 5 000 and 30 000 (one scale stage of size n), then a no-op.
// Prints per-target times (from the --json done events), the whole build's wall time, the no-op
// time and the peak RSS of the CLI process (GNU time), beside `node -e 0` measured in the same run.
// Goal at 30 000 on a 2-core machine: whole data half ≤ 20 s, no-op ≤ 0.3 s, peak ≤ 1.5 GiB.
//   node --import tsx bench/data-half.ts [--quick]   (--quick: n = 1 000 only)
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = path.join(REPO, 'packages', 'engine', 'bin', 'rc1-build.js');
const TARGETS = [
  'shadow_set',
  'diversity_report',
  'seed_pool',
  'pool_validation',
  'difficulty_metrics',
  'balanced_pool',
  'difficulty_report',
];
const SIZES = process.argv.includes('--quick') ? [1000] : [1000, 5000, 30000];
const GNU_TIME = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : null;

interface Run {
  wallMs: number;
  rssMb: number | null;
  targetMs: Record<string, number>;
  code: number;
}

function workspace(n: number): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `rc1-bench-data-${n}-`));
  for (const p of ['rc1.build.ts', 'rules', 'lib', 'configs', 'data/raw', 'templates'])
    fs.cpSync(path.join(REPO, p), path.join(dir, p), { recursive: true });
  // One scale stage of size n, in the (default) dev profile.
  const dev = fs
    .readFileSync(path.join(dir, 'configs/profiles/dev.yaml'), 'utf8')
    .replace(/scale:\n(?: .*\n)+/, `scale:\n  stages: []\n  n: ${n}\n`);
  fs.writeFileSync(path.join(dir, 'configs/profiles/dev.yaml'), dev);
  return dir;
}

function build(dir: string, targets: string[]): Run {
  const args = [CLI, ...targets, '--json', '-j', '2'];
  const t0 = performance.now();
  const r = GNU_TIME
    ? spawnSync(GNU_TIME, ['-f', 'RSS_KB=%M', process.execPath, ...args], {
        cwd: dir,
        encoding: 'utf8',
        maxBuffer: 1 << 28,
      })
    : spawnSync(process.execPath, args, { cwd: dir, encoding: 'utf8', maxBuffer: 1 << 28 });
  const wallMs = performance.now() - t0;
  const rss = /RSS_KB=(\d+)/.exec(r.stderr ?? '');
  const targetMs: Record<string, number> = {};
  for (const line of (r.stdout ?? '').split('\n')) {
    if (!line.startsWith('{')) continue;
    const e = JSON.parse(line) as { event: string; target?: string; ms?: number };
    if (e.event === 'done' && e.target) targetMs[e.target] = e.ms ?? 0;
  }
  return { wallMs, rssMb: rss ? Number(rss[1]) / 1024 : null, targetMs, code: r.status ?? -1 };
}

function nodeStartup(): number {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    spawnSync(process.execPath, ['-e', '0']);
    times.push(performance.now() - t0);
  }
  return Math.min(...times);
}

const fmt = (ms: number | undefined): string =>
  ms === undefined ? '—' : ms < 1000 ? `${ms.toFixed(0)} ms` : `${(ms / 1000).toFixed(2)} s`;

console.log(
  `# RC1 data half, built from nothing through the CLI (-j 2) — node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), load ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
const nodeMs = nodeStartup();
const rows: string[] = [];
const summary: string[] = [];
for (const n of SIZES) {
  const dir = workspace(n);
  try {
    const full = build(dir, ['pool_validation', 'difficulty_report']);
    if (full.code !== 0) {
      console.error(`n = ${n}: the build exited ${full.code}`);
      process.exitCode = 1;
    }
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300); // past the stat cache's racy window
    build(dir, ['pool_validation', 'difficulty_report']);
    const noops = [0, 1, 2].map(() => build(dir, ['pool_validation', 'difficulty_report']).wallMs);
    for (const t of TARGETS) rows.push(`| ${n} | ${t} | ${fmt(full.targetMs[t])} |`);
    const noop = Math.min(...noops);
    const rss = full.rssMb === null ? 'n/a' : `${full.rssMb.toFixed(0)} MiB`;
    const met =
      n === 30000
        ? ` ${full.wallMs <= 20000 ? 'yes' : 'NO'} / ${noop <= 300 ? 'yes' : 'NO'} / ${full.rssMb !== null && full.rssMb <= 1536 ? 'yes' : 'NO'}`
        : ' —';
    summary.push(
      `| ${n} | ${full.code === 0 ? 'pass' : `exit ${full.code}`} | ${fmt(full.wallMs)} | ${fmt(noop)} | ${fmt(nodeMs)} | ${rss} |${met} |`,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
console.log('\n| n | target | time |\n|---|---|---|');
for (const r of rows) console.log(r);
console.log(
  '\n| n | gates | whole data half (wall) | no-op (best of 3) | node -e 0 | peak RSS | goal met at 30 000: ≤ 20 s / ≤ 0.3 s / ≤ 1.5 GiB |\n|---|---|---|---|---|---|---|',
);
for (const s of summary) console.log(s);
