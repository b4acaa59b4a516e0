// One build at a time per workspace: .rc1/lock holds {pid, host, started}. Created with O_EXCL.
// A lock whose holder is a dead process on this host is broken automatically (no --unlock
// ritual after a crash); a live holder is named in the refusal.
import * as fs from 'node:fs';
import * as os from 'node:os';
import { UsageError } from '../config/usage-error.ts';

export interface LockHolder { pid: number; host: string; started: string; command?: string }

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class LockedError extends UsageError {
  constructor(readonly holder: LockHolder, file: string) {
    super({
      headline: `another build holds this workspace: pid ${holder.pid} on ${holder.host}, started ${holder.started}`,
      location: file,
      context: holder.command ? { command: holder.command } : {},
      hint: 'wait for it to finish; a lock left by a dead process is broken automatically',
    });
  }
}

export class WorkspaceLock {
  private held = false;
  /** Set when a stale lock was broken while acquiring. */
  brokeStale: LockHolder | null = null;

  constructor(private readonly file: string) {}

  acquire(command: string): void {
    const me: LockHolder = { pid: process.pid, host: os.hostname(), started: new Date().toISOString(), command };
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        const fd = fs.openSync(this.file, 'wx');
        fs.writeSync(fd, JSON.stringify(me));
        fs.closeSync(fd);
        this.held = true;
        return;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
      let holder: LockHolder | null = null;
      try {
        holder = JSON.parse(fs.readFileSync(this.file, 'utf8')) as LockHolder;
      } catch {
        holder = null; // being written right now, or torn by a crash between open and write
      }
      if (holder && holder.host === os.hostname() && !alive(holder.pid)) {
        // Break it by renaming to a unique name: only one breaker wins the rename.
        const grave = `${this.file}.stale-${process.pid}`;
        try {
          fs.renameSync(this.file, grave);
          fs.rmSync(grave, { force: true });
          this.brokeStale = holder;
        } catch {
          // someone else broke it first; retry
        }
        continue;
      }
      if (holder) throw new LockedError(holder, this.file);
      // Unreadable lock: if it stays empty for a moment, its writer died mid-write.
      const st = fs.statSync(this.file, { throwIfNoEntry: false });
      if (st && Date.now() - st.mtimeMs > 2000) fs.rmSync(this.file, { force: true });
      else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    }
    throw new UsageError({ headline: `could not take the workspace lock ${this.file}`, hint: 'try again' });
  }

  release(): void {
    if (!this.held) return;
    this.held = false;
    fs.rmSync(this.file, { force: true });
  }
}
