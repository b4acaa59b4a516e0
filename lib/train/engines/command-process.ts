// The process half of the `command` engine: starts the external trainer in its own process group
// (so a signal reaches it and every process it forks, e.g. torchrun's workers or DataLoader
// workers), streams its stdout and stderr line by line, stops the whole group (SIGTERM, then
// SIGKILL after the grace period), and keeps a pid file so that a trainer orphaned by a build that
// was killed outright (kill -9: no chance to forward anything) is stopped before a new one starts
// writing the same checkpoint dir.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { basename } from 'node:path';
import { writeFileAtomic } from 'rc1-build';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface TrainerProcess {
  readonly pid: number;
  readonly exited: Promise<Exit>;
  /** SIGTERM to the group; SIGKILL to the group when it has not exited after graceMs. Resolves on exit. */
  stop(graceMs: number): Promise<Exit>;
  /** The last lines of output (stdout and stderr, in arrival order). */
  tail(): string[];
}

export interface StartOptions {
  argv: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  onLine(line: string, stream: 'stdout' | 'stderr'): void;
  /** Lines kept for error messages. */
  tailLines?: number;
}

function signalGroup(pid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, sig);
    return true;
  } catch {
    return false;
  }
}

function lineSplitter(onLine: (l: string) => void): { push(b: Buffer): void; end(): void } {
  let rest = '';
  return {
    push(b) {
      const text = rest + b.toString('utf8');
      const parts = text.split(/\r\n|\n|\r(?!$)/);
      rest = parts.pop() ?? '';
      for (const p of parts) onLine(p);
    },
    end() {
      if (rest !== '') onLine(rest);
      rest = '';
    },
  };
}

/** Starts the trainer; rejects when argv[0] cannot be started (not found, not executable). */
export function startTrainer(o: StartOptions): Promise<TrainerProcess> {
  const [cmd, ...args] = o.argv;
  if (!cmd) return Promise.reject(new Error('train.command.argv is empty'));
  const keep = o.tailLines ?? 40;
  const last: string[] = [];
  const child: ChildProcess = spawn(cmd, args, {
    cwd: o.cwd,
    env: o.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const feed = (stream: 'stdout' | 'stderr') =>
    lineSplitter((line) => {
      last.push(line);
      if (last.length > keep) last.shift();
      o.onLine(line, stream);
    });
  const out = feed('stdout');
  const err = feed('stderr');
  child.stdout!.on('data', (b: Buffer) => out.push(b));
  child.stderr!.on('data', (b: Buffer) => err.push(b));
  const exited = new Promise<Exit>((resolve) => {
    child.once('close', (code, signal) => {
      out.end();
      err.end();
      resolve({ code, signal });
    });
  });
  return new Promise((resolve, reject) => {
    child.once('error', (e) => reject(new Error(`cannot start the trainer ${JSON.stringify(cmd)}: ${e.message}`)));
    child.once('spawn', () => {
      const pid = child.pid!;
      let stopping: Promise<Exit> | null = null;
      resolve({
        pid,
        exited,
        tail: () => last.slice(),
        stop(graceMs) {
          stopping ??= (async () => {
            signalGroup(pid, 'SIGTERM');
            const timer = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), graceMs).unref());
            if ((await Promise.race([exited, timer])) === 'timeout') signalGroup(pid, 'SIGKILL');
            const e = await exited;
            signalGroup(pid, 'SIGKILL'); // stragglers the leader forked and left behind
            return e;
          })();
          return stopping;
        },
      });
    });
  });
}

interface PidRecord {
  pid: number;
  argv: string[];
  started: string;
}

/** The command line of a live process (Linux /proc); null where it cannot be read. */
function cmdlineOf(pid: number): string[] | null {
  try {
    return fs
      .readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .filter((s) => s !== '');
  } catch {
    return null;
  }
}

/**
 * Whether a live command line is the recorded one: it ends with the recorded arguments, preceded by
 * a program of the same base name. Interpreters and shims rewrite argv[0] (pyenv runs
 * `/usr/bin/env bash …/shims/python3 …`, then `…/versions/3.11.7/bin/python3 …`; a console script
 * such as `accelerate` runs as `python3 …/bin/accelerate …`), never the arguments after it.
 */
export function sameCommand(cmdline: readonly string[], argv: readonly string[]): boolean {
  const [prog, ...args] = argv;
  if (!prog || cmdline.length < argv.length) return false;
  const at = cmdline.length - args.length;
  if (!args.every((a, i) => cmdline[at + i] === a)) return false;
  return cmdline.slice(0, at).some((c) => basename(c) === basename(prog));
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Stops a trainer left running by an earlier build of this workspace (its pid file names it and
 * its command line still matches). Returns a line for the log, or null when there was none.
 */
export async function stopOrphan(pidFile: string, graceMs: number): Promise<string | null> {
  let rec: PidRecord;
  try {
    rec = JSON.parse(fs.readFileSync(pidFile, 'utf8')) as PidRecord;
  } catch {
    return null;
  }
  fs.rmSync(pidFile, { force: true });
  if (!groupAlive(rec.pid)) return null;
  const cmdline = cmdlineOf(rec.pid);
  if (cmdline !== null && !sameCommand(cmdline, rec.argv)) return null;
  signalGroup(rec.pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (groupAlive(rec.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (groupAlive(rec.pid)) signalGroup(rec.pid, 'SIGKILL');
  return `stopped trainer pid ${rec.pid} left running by an earlier build (started ${rec.started})`;
}

export function writePidFile(pidFile: string, pid: number, argv: readonly string[]): void {
  writeFileAtomic(
    pidFile,
    `${JSON.stringify({ pid, argv: [...argv], started: new Date().toISOString() } satisfies PidRecord)}\n`,
  );
}
