// Shared helpers for the benchmarks in bench/: wall-clock timing of in-process work and of child
// processes, best/median summaries, the markdown table printer and the machine description that
// heads every report. Benchmarks print; nothing here decides what is measured.
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { readFileSync, readdirSync, realpathSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';

export interface Sample {
  /** Every run, in the order taken, milliseconds. */
  runs: number[];
  best: number;
  median: number;
}

export function summarize(runs: number[]): Sample {
  if (runs.length === 0) throw new Error('internal error: summarize() of no runs; please report');
  const sorted = [...runs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { runs, best: sorted[0]!, median };
}

/** Wall time of fn in milliseconds. */
export function timeSync(fn: () => void): number {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
}

export async function timeAsync(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

export interface ChildRun {
  ms: number;
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to completion and returns its wall time (spawn to exit, as `time` would see
 * it). Output is captured through pipes, never a terminal, for every tool alike.
 */
export function runChild(cmd: string, args: string[], opts: SpawnSyncOptions = {}): ChildRun {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { maxBuffer: 256 * 1024 * 1024, ...opts, encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.error) throw r.error;
  return { ms, status: r.status, stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? '') };
}

/** Like runChild, but a non-zero exit is an error that shows the command's stderr. */
export function runChildOk(cmd: string, args: string[], opts: SpawnSyncOptions = {}): ChildRun {
  const r = runChild(cmd, args, opts);
  if (r.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}\n${r.stderr.slice(-4000)}`);
  }
  return r;
}

export function sleepMs(ms: number): void {
  if (ms > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

export function fmtMs(ms: number): string {
  return ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2);
}

/** An integer with thousands separators, e.g. 1,563. */
export function fmtInt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...rows.map(line)].join('\n');
}

/** First line of a command's version output, or 'not found'. */
export function toolVersion(cmd: string, args: string[] = ['--version']): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.error || r.status !== 0) return 'not found';
  return (String(r.stdout).trim() || String(r.stderr).trim()).split('\n')[0]!;
}

/** Whether the CPU has the SHA extensions that OpenSSL uses for SHA-256 (Linux only). */
function shaExtensions(): string {
  try {
    const flags = readFileSync('/proc/cpuinfo', 'utf8');
    return /\bsha_ni\b/.test(flags) ? 'yes (sha_ni)' : /\bsha2\b/.test(flags) ? 'yes (sha2)' : 'no';
  } catch {
    return 'unknown';
  }
}

export function machineReport(): string {
  const c = cpus();
  return [
    `node ${process.version} (OpenSSL ${process.versions.openssl}), ${process.platform}-${process.arch}`,
    `CPU: ${c[0]?.model.trim() ?? 'unknown'} × ${c.length} logical cores; SHA extensions: ${shaExtensions()}`,
    hostSpeedNote(),
    loadNote('at start'),
  ].join('\n');
}

/** The load averages, so a reader can tell whether other work shared the machine. */
export function loadNote(when: string): string {
  return `load average ${when}: ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' / ')} (1 / 5 / 15 min)`;
}

export function hasFlag(name: string): boolean {
  return process.argv.slice(2).includes(name);
}

/**
 * The host's speed right now: the best of 3 runs of a fixed integer loop (3·10⁸ iterations of a
 * modulo and an addition) in a child process, in ms (~1.5 s of CPU at a benchmark's start). Printed beside timings so that runs taken hours apart can be compared:
 * this machine's shared cores drift by 1.3–1.7× over a day for the same code.
 */
export function hostSpeedMs(): number {
  const loop =
    'let t=performance.now();let x=0;for(let i=0;i<3e8;i++)x+=i%7;process.stdout.write(String(performance.now()-t))';
  const runs = [0, 1, 2].map(() => Number(runChildOk(process.execPath, ['-e', loop]).stdout));
  return Math.min(...runs);
}

/** hostSpeedMs() as a line of a benchmark's header. */
export function hostSpeedNote(): string {
  return `host speed: ${hostSpeedMs().toFixed(0)} ms for a fixed loop of 3·10⁸ integer modulos and additions (best of 3; lower is faster; compare figures taken at different times only with this beside them)`;
}

/**
 * The filesystem a benchmark's workspaces are on, and for ext4 whether it has a journal. Without
 * one, ext4 makes each new file by scanning past every inode deleted near it in the last 1–6
 * minutes (fs/ext4/ialloc.c, find_inode_bit and recently_deleted), so a build that follows a clean
 * pays for what the clean deleted, in proportion to how many files it makes: read full builds
 * from clean with this in mind (bench/results/speed.md, sixteenth pass).
 */
export function filesystemNote(dir: string): string {
  let mounts: string[] = [];
  try {
    mounts = readFileSync('/proc/self/mountinfo', 'utf8').split('\n');
  } catch {
    return 'filesystem of the workspaces: unknown (no /proc/self/mountinfo)';
  }
  let real = dir;
  try {
    real = realpathSync(dir);
  } catch {
    /* as given */
  }
  let best: { point: string; type: string; source: string } | null = null;
  for (const line of mounts) {
    const [pre, post] = line.split(' - ');
    if (!pre || !post) continue;
    const point = pre.split(' ')[4] ?? '';
    const [type = '?', source = '?'] = post.split(' ');
    const under = point === '/' || real === point || real.startsWith(`${point}/`);
    if (under && (!best || point.length >= best.point.length)) best = { point, type, source };
  }
  if (!best) return 'filesystem of the workspaces: unknown';
  const where = `${best.type} (${best.source} on ${best.point})`;
  if (best.type !== 'ext4') return `filesystem of the workspaces: ${where}`;
  let journals: string[] = [];
  try {
    journals = readdirSync('/proc/fs/jbd2');
  } catch {
    /* no jbd2 at all: no ext4 journal is open */
  }
  const dev = best.source.split('/').pop() ?? '';
  return journals.some((j) => j.startsWith(`${dev}-`))
    ? `filesystem of the workspaces: ${where}, with a journal`
    : `filesystem of the workspaces: ${where}, no journal: each new file skips the inodes deleted near it in the last 1–6 minutes, so a build right after a clean pays for what the clean deleted (bench/results/speed.md, sixteenth pass)`;
}
