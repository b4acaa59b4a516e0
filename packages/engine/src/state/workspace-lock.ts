// One build at a time per workspace. Taking the lock and breaking a dead holder's lock are one
// atomic step, with no window in which two builds both believe they hold it.
//
// How: `.rc1/lock/` holds numbered lock files (`0000000000000007`), each a complete JSON record
// of its holder (pid, process start time, host, boot id, a random token, command), made visible
// with link(2) from a fully written temp file, so a reader never sees a torn record. The lock
// is the highest-numbered file. To take it, read the highest file N: if its holder still runs,
// the lock is busy; if it was released, or its holder is dead, create N+1 with link(2), which
// fails with EEXIST if anyone else created N+1 first — so of all contenders that judged the
// same N free, exactly one wins. The winner then lists the directory once more and backs off
// (removes its own file) if a higher number exists, which can only happen when its view of N
// was out of date. The highest number never goes away: release rewrites that file as
// "released" (rename over it) instead of deleting it, and a winner removes only lower numbers.
// So the highest number only grows, and two live holders M < N are impossible: whoever made N
// first saw N-1 free, and by induction some contender judged M free while M's holder ran and
// had not released, or M's holder saw N in its own check and backed off.
//
// Liveness (process-identity.ts): pid + start time from /proc + host + boot id. A zombie, a pid
// now used by another process, a holder from before a reboot, or a record naming this very
// process's pid with another start time (a container restart reuses small pids) are all dead holders, broken
// automatically. A holder on another host, or in another PID namespace of this kernel (another
// container on the host network), cannot be checked and is left alone (unknown, never broken).
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { UsageError } from '../config/usage-error.ts';
import { type HolderState, type ProcessIdentity, holderState, selfIdentity } from './process-identity.ts';

export const LOCK_FORMAT = 2;

export interface LockHolder extends ProcessIdentity {
  format: number;
  token: string;
  started: string;
  command?: string;
  released?: boolean;
}

export type TryLock = { ok: true } | { ok: false; holder: LockHolder; state: HolderState };

const NUMBERED = /^\d{16}$/;
const STALE_TEMP_MS = 60_000;

export class LockedError extends UsageError {
  constructor(
    readonly holder: LockHolder,
    file: string,
    state: HolderState,
    waitedS?: number,
  ) {
    super({
      headline: `another build holds this workspace: pid ${holder.pid} on ${holder.host}, started ${holder.started}`,
      location: file,
      context: {
        ...(holder.command ? { command: holder.command } : {}),
        ...(state.kind === 'unknown' ? { liveness: state.why } : {}),
        ...(waitedS !== undefined ? { waited: `${waitedS} s` } : {}),
      },
      hint:
        state.kind === 'unknown'
          ? `its liveness cannot be checked from here, so it is never broken automatically: add --wait to queue behind it, or, after checking that pid ${holder.pid} no longer runs on ${holder.host}${holder.pidNs ? ` in ${holder.pidNs}` : ''}, remove ${file} by hand`
          : 'wait for it to finish, or add --wait to queue behind it; a lock left by a dead process is broken automatically',
    });
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

export class WorkspaceLock {
  private held: string | null = null;
  private readonly token = crypto.randomBytes(12).toString('hex');
  /** Set when a dead holder's lock was broken while acquiring, with why it was judged dead. */
  brokeStale: { holder: LockHolder; why: string } | null = null;
  /**
   * Called each time acquire() or acquireWaiting() takes the lock: what the workspace knew of its
   * files before holding it (compiled modules another holder may have swept) is looked at again.
   */
  onAcquired: (() => void) | null = null;

  constructor(private readonly dir: string) {}

  /** Whether this process holds the lock now. */
  get holding(): boolean {
    return this.held !== null;
  }

  get path(): string {
    return this.dir;
  }

  private name(n: number): string {
    return path.join(this.dir, String(n).padStart(16, '0'));
  }

  private numbers(): number[] {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    }
    return names
      .filter((n) => NUMBERED.test(n))
      .map(Number)
      .sort((a, b) => a - b);
  }

  private read(n: number): LockHolder | null {
    try {
      return JSON.parse(fs.readFileSync(this.name(n), 'utf8')) as LockHolder;
    } catch {
      return null;
    }
  }

  /** A lock file from before format 2 (a plain file at the lock's path): break it if dead. */
  private migrateOldFile(): TryLock | null {
    const st = fs.lstatSync(this.dir, { throwIfNoEntry: false });
    if (!st || st.isDirectory()) return null;
    let old: { pid?: number; host?: string; started?: string; command?: string } = {};
    try {
      old = JSON.parse(fs.readFileSync(this.dir, 'utf8')) as typeof old;
    } catch {
      /* torn: dead */
    }
    if (typeof old.pid === 'number') {
      const holder: LockHolder = {
        format: 1,
        token: '',
        pid: old.pid,
        host: old.host ?? '',
        startTicks: null,
        bootId: null,
        started: old.started ?? '?',
        ...(old.command ? { command: old.command } : {}),
      };
      const state = holderState(holder, false);
      if (state.kind !== 'dead') return { ok: false, holder, state };
    }
    fs.rmSync(this.dir, { force: true });
    return null;
  }

  /** One attempt to take the lock; never waits for a live holder. */
  tryAcquire(command: string): TryLock {
    if (this.held) return { ok: true };
    const old = this.migrateOldFile();
    if (old) return old;
    fs.mkdirSync(this.dir, { recursive: true });
    const me: LockHolder = {
      format: LOCK_FORMAT,
      token: this.token,
      ...selfIdentity(),
      started: new Date().toISOString(),
      command,
    };
    const tmp = path.join(this.dir, `tmp-${this.token}`);
    for (let attempt = 0; attempt < 50; attempt++) {
      const nums = this.numbers();
      const top = nums.at(-1) ?? 0;
      let broke: { holder: LockHolder; why: string } | null = null;
      if (top > 0) {
        const rec = this.read(top);
        // A record is written whole before it is linked into place, so an unreadable one was
        // torn by a crash of the machine: its holder is gone.
        if (rec && !rec.released) {
          const state = holderState(rec, rec.token === this.token);
          if (state.kind !== 'dead') return { ok: false, holder: rec, state };
          broke = { holder: rec, why: state.why };
        }
      }
      const mine = this.name(top + 1);
      fs.writeFileSync(tmp, JSON.stringify(me));
      try {
        fs.linkSync(tmp, mine);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        sleepSync(1 + Math.floor(Math.random() * 5));
        continue; // someone else took top + 1 first: look again
      } finally {
        fs.rmSync(tmp, { force: true });
      }
      if ((this.numbers().at(-1) ?? 0) > top + 1) {
        fs.rmSync(mine, { force: true }); // our view of `top` was out of date
        continue;
      }
      this.held = mine;
      if (broke) this.brokeStale = broke;
      this.sweep(top + 1);
      return { ok: true };
    }
    throw new UsageError({
      headline: `could not take the workspace lock ${this.dir} after 50 attempts`,
      hint: 'many builds are starting at once; try again',
    });
  }

  /** Remove lower-numbered lock files and temp files left by crashed contenders. */
  private sweep(mine: number): void {
    for (const n of this.numbers()) if (n < mine) fs.rmSync(this.name(n), { force: true });
    for (const f of fs.readdirSync(this.dir)) {
      if (!f.startsWith('tmp-')) continue;
      const st = fs.statSync(path.join(this.dir, f), { throwIfNoEntry: false });
      if (st && Date.now() - st.mtimeMs > STALE_TEMP_MS) fs.rmSync(path.join(this.dir, f), { force: true });
    }
  }

  /** Take the lock or throw LockedError naming the live holder. */
  acquire(command: string): void {
    const r = this.tryAcquire(command);
    if (!r.ok) throw new LockedError(r.holder, this.dir, r.state);
    this.onAcquired?.();
  }

  /**
   * Take the lock, queueing behind a live holder for up to `waitS` seconds (Infinity: as long
   * as it takes). `onWait` is told once, when the wait begins.
   */
  async acquireWaiting(command: string, waitS: number, onWait: (holder: LockHolder) => void): Promise<void> {
    const t0 = Date.now();
    let told = false;
    for (;;) {
      const r = this.tryAcquire(command);
      if (r.ok) {
        this.onAcquired?.();
        return;
      }
      const waited = (Date.now() - t0) / 1000;
      if (waited >= waitS) throw new LockedError(r.holder, this.dir, r.state, Math.round(waited));
      if (!told) {
        onWait(r.holder);
        told = true;
      }
      // A try every 100–200 ms, and one at the deadline: --wait=S gives up after S seconds, not up to 200 ms later.
      const left = waitS * 1000 - (Date.now() - t0);
      await new Promise((res) => setTimeout(res, Math.max(0, Math.min(100 + Math.random() * 100, left))));
    }
  }

  /** The highest-numbered record unless it is released. */
  topRecord(): LockHolder | null {
    const top = this.numbers().at(-1);
    const rec = top === undefined ? null : this.read(top);
    return rec && !rec.released ? rec : null;
  }

  /** Mark the lock released (the file stays: the highest number must never disappear). */
  release(): void {
    if (!this.held) return;
    const file = this.held;
    this.held = null;
    const tmp = path.join(this.dir, `tmp-${this.token}`);
    try {
      fs.writeFileSync(
        tmp,
        JSON.stringify({
          format: LOCK_FORMAT,
          token: this.token,
          released: true,
          pid: process.pid,
          released_at: new Date().toISOString(),
        }),
      );
      fs.renameSync(tmp, file);
    } catch {
      fs.rmSync(tmp, { force: true });
      // Could not write the release mark (disk full?): the record still names this process,
      // which is about to exit, so the next build finds it dead and breaks it.
    }
  }
}

/** The unreleased record of a workspace's lock, if any, whether or not its holder still runs. */
export function currentHolder(dir: string): LockHolder | null {
  return new WorkspaceLock(dir).topRecord();
}
