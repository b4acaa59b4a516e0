// Who a process is, beyond its pid: a pid is reused, and a container restart hands out the same
// small pids again, so a lock names its holder by pid + the process's start time (field 22 of
// /proc/<pid>/stat, clock ticks since boot) + the host name + the kernel's boot id
// (/proc/sys/kernel/random/boot_id) + its PID namespace (/proc/self/ns/pid). `holderState` decides from that whether the holder still runs.
import * as fs from 'node:fs';
import * as os from 'node:os';

export interface ProcessIdentity {
  pid: number;
  host: string;
  /** Field 22 of /proc/<pid>/stat as a decimal string; null where /proc is not available. */
  startTicks: string | null;
  bootId: string | null;
  /** The PID namespace (readlink /proc/self/ns/pid, e.g. "pid:[4026531836]"); null where unknown. */
  pidNs?: string | null;
}

export type HolderState =
  | { kind: 'alive' }
  | { kind: 'dead'; why: string }
  /** On another host (a shared filesystem): its liveness cannot be checked from here. */
  | { kind: 'unknown'; why: string };

/** State letter and start time of a pid from /proc, or null if it has no entry. */
export function procStat(pid: number, procRoot = '/proc'): { state: string; startTicks: string } | null {
  let text: string;
  try {
    text = fs.readFileSync(`${procRoot}/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // "pid (comm) S ppid …": comm may hold spaces and parentheses, so split after the last ')'.
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state), so field 22 (starttime) is rest[19].
  const state = rest[0];
  const startTicks = rest[19];
  return state && startTicks ? { state, startTicks } : null;
}

/** A process by pid and start time (field 22 of /proc/<pid>/stat): still running, not a zombie. */
export function processRunning(pid: number, startTicks: string | null, procRoot = '/proc'): boolean {
  const st = procStat(pid, procRoot);
  if (!st || st.state === 'Z' || st.state === 'X') return false;
  return startTicks === null || st.startTicks === startTicks;
}

/** This machine's boot id (/proc/sys/kernel/random/boot_id), or null where there is none. */
export function readBootId(): string | null {
  try {
    return fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
  } catch {
    return null;
  }
}

function readPidNs(): string | null {
  try {
    return fs.readlinkSync('/proc/self/ns/pid') || null;
  } catch {
    return null;
  }
}

let self: ProcessIdentity | null = null;

export function selfIdentity(): ProcessIdentity {
  self ??= {
    pid: process.pid,
    host: os.hostname(),
    startTicks: procStat(process.pid)?.startTicks ?? null,
    bootId: readBootId(),
    pidNs: readPidNs(),
  };
  return self;
}

function killZero(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether the process named by `holder` still runs. `ownRecord` is true when this lock object
 * wrote the record. A record with our own pid that another lock object wrote is this very
 * process when its start time is ours (alive), else a process from before a restart (dead).
 * A holder in another PID namespace of this kernel (another container on the host network)
 * cannot be looked up in our /proc: unknown, never broken.
 */
export function holderState(
  holder: Partial<ProcessIdentity> & { pid: number },
  ownRecord: boolean,
  me: ProcessIdentity = selfIdentity(),
): HolderState {
  if (holder.host !== undefined && holder.host !== me.host) {
    return { kind: 'unknown', why: `it runs on another host (${holder.host})` };
  }
  if (holder.bootId && me.bootId && holder.bootId !== me.bootId)
    return { kind: 'dead', why: 'the machine has rebooted since it started' };
  if (holder.pidNs && me.pidNs && holder.pidNs !== me.pidNs) {
    return {
      kind: 'unknown',
      why: `it runs in another PID namespace (${holder.pidNs}; this build is in ${me.pidNs}: another container on this host), so its pid cannot be checked from here`,
    };
  }
  if (holder.pid === me.pid) {
    if (ownRecord) return { kind: 'alive' };
    if (holder.startTicks && me.startTicks && holder.startTicks === me.startTicks) return { kind: 'alive' };
    return { kind: 'dead', why: `its pid ${holder.pid} is this process's own (a restart reused it)` };
  }
  if (me.startTicks === null) {
    // No /proc (not Linux): the pid is all there is.
    return killZero(holder.pid) ? { kind: 'alive' } : { kind: 'dead', why: `no process ${holder.pid}` };
  }
  const st = procStat(holder.pid);
  if (!st) return { kind: 'dead', why: `no process ${holder.pid}` };
  if (st.state === 'Z' || st.state === 'X')
    return { kind: 'dead', why: `process ${holder.pid} is a zombie (exited, not yet reaped)` };
  if (holder.startTicks && st.startTicks !== holder.startTicks) {
    return {
      kind: 'dead',
      why: `pid ${holder.pid} now belongs to another process (started at tick ${st.startTicks}, not ${holder.startTicks})`,
    };
  }
  return { kind: 'alive' };
}
