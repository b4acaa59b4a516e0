// Moves a finished rule's outputs from its temp root into place and records the target, as one
// recoverable step: a journal (the record plus the list of moves) is written first, then the
// moves, then the trace line, then the journal is removed. A build killed in between leaves a
// journal that the next build (holding the lock) rolls forward, so a multi-file output set ends
// up fully in place with its record, or — if killed before the journal — not at all, with the old
// record still describing the old outputs (any mix of old and new is then seen as stale).
//
// Filesystems: a move is a rename; where the output lives on another filesystem than .rc1/tmp
// (EXDEV: a mounted data/ or checkpoints/, or .rc1 on another disk) it is a copy to a staging
// name beside the output (`<path>.rc1-new`), fsync, then a rename on the output's own filesystem.
// Durability: a target whose rule ran ≥ 1 s had its outputs' bytes fsynced when they were hashed
// (runner/hash-output.ts), before the rename. Quicker targets' outputs, the directories that
// received outputs and the trace log are made durable once, at the end of the build (syncTouched:
// an fsync per path for a few, one syncfs per filesystem for many), before the stat cache is
// saved. That is safe because content decides: until the stat cache records an output's (size,
// mtime, inode, ctime), a later build re-hashes it, so a file or rename that a power cut lost
// reads as stale, never as up to date. A build of quick work only (finishBuild: no output synced
// when hashed, run times summing to under a second) skips that sync and marks the stat cache and
// the other stat-keyed records as not durable, which a later boot does not trust
// (state/durability.ts): the same guarantee, without waiting on the disk for work cheaper to redo.
// Recovery never wedges the workspace: a journal it cannot roll forward (a move the filesystem
// refuses, or any other error) is reported, removed, and its target recorded as failed so that
// it rebuilds. It also removes the `<path>.rc1-old` a directory replacement left aside.
// Fault injection for tests: RC1_FAULT_COMMIT_PAUSE_MS=N sleeps N ms after the journal (also one
// written just before a cross-filesystem copy) and after each move, so a test can SIGKILL a build inside the commit window (test/integration/kill-loop).
import * as fs from 'node:fs';
import type * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import type { StatCache } from '../hash/stat-cache.ts';
import type { HashedOutput } from '../runner/protocol.ts';
import { FSYNC, ensureDir, fsyncPath, fsyncTree, readJsonOrNull, rmrf, writeFileAtomic } from '../util/fs.ts';
import { EngineWriteError, engineWrite } from '../util/write-error.ts';
import { DURABLE_AFTER_MS, bootId } from './durability.ts';
import type { OutputRecord, TargetRecord, TraceLog } from './trace-log.ts';

interface Move {
  from: string;
  to: string;
  dir: boolean;
}

const FAULT_PAUSE_MS = Number(process.env.RC1_FAULT_COMMIT_PAUSE_MS ?? 0);
function faultPause(): void {
  if (FAULT_PAUSE_MS > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, FAULT_PAUSE_MS);
}
/**
 * How many paths to make durable at the end of a build before one `sync -f` per filesystem is
 * used instead of an fsync per path. The spawn (a fork + exec of the engine's process: 7–14 ms
 * from the resident server) and syncfs's flush of every dirty file of the filesystem, other
 * processes' too, cost more than a few dozen fsyncs on the thread pool (34 files and their
 * directory: 2.3–5.0 ms vs `sync -f` 3.2–10.2 ms from a small process, bench/results/speed.md,
 * fifth pass); a build from clean (thousands of files) keeps the one syncfs.
 */
export const SYNCFS_ABOVE = 64;

interface Journal {
  record: TargetRecord;
  moves: Move[];
}

export interface RecoveryFailure {
  target: string;
  error: string;
}
export interface Recovery {
  recovered: string[];
  failed: RecoveryFailure[];
}

export function outputRecords(hashed: HashedOutput[]): OutputRecord[] {
  return hashed.map((h) => ({
    path: h.path,
    sha256: h.sha256,
    size: h.size,
    dir: h.dir,
    ...(h.dir
      ? { files: Object.fromEntries(Object.entries(h.files).map(([rel, [sha]]) => [rel, sha])), links: h.links ?? {} }
      : {}),
  }));
}

/**
 * Keeps the file an output replaces linked aside (under .rc1/tmp) across the rename, and frees it
 * later: a rename that drops a file's last link frees its blocks inside the rename, which on a
 * busy journaling filesystem (ext4, online discard) took 1–3 ms per output, several times what
 * the rename of a new name takes. `link` gives the aside path, or null (no link: plain rename).
 */
interface Aside {
  link(to: string): string | null;
  release(p: string): void;
}

/** Rename `from` onto `to` on one filesystem; a directory replaces the old one through `<to>.rc1-old`. */
function renameInto(from: string, to: string, dir: boolean, aside?: Aside): void {
  if (dir) {
    const old = `${to}.rc1-old`;
    rmrf(old);
    if (fs.existsSync(to)) fs.renameSync(to, old);
    fs.renameSync(from, to);
    rmrf(old);
  } else {
    const st = fs.lstatSync(to, { throwIfNoEntry: false });
    if (st?.isDirectory()) rmrf(to);
    // Still one atomic replacement of `to`: the old file only keeps a second name meanwhile.
    const kept = aside && st?.isFile() && st.nlink === 1 ? aside.link(to) : null;
    try {
      fs.renameSync(from, to);
    } finally {
      if (kept !== null) aside!.release(kept);
    }
  }
}

/** Across filesystems: copy to `<to>.rc1-new` on the destination's filesystem, fsync, rename. */
function copyInto(m: Move): void {
  const staged = `${m.to}.rc1-new`;
  rmrf(staged);
  try {
    if (m.dir) {
      fs.cpSync(m.from, staged, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
      fsyncTree(staged);
    } else {
      fs.copyFileSync(m.from, staged, fs.constants.COPYFILE_FICLONE);
      const st = fs.statSync(m.from);
      fs.utimesSync(staged, st.atime, st.mtime);
      fsyncPath(staged);
    }
    renameInto(staged, m.to, m.dir);
  } catch (e) {
    rmrf(staged);
    throw e;
  }
  rmrf(m.from);
}

/**
 * One syncfs(2) per filesystem holding these directories (`sync -f`, coreutils); false when one
 * failed or `sync -f` is missing (busybox, coreutils before 8.24).
 */
async function syncFilesystemsOf(dirs: Iterable<string>, started?: () => void): Promise<boolean> {
  const { execFile } = await import('node:child_process'); // loaded only when a build wrote something
  const byDev = new Map<bigint, string>();
  for (const d of dirs) {
    let st: fs.BigIntStats | undefined;
    try {
      st = fs.statSync(d, { bigint: true, throwIfNoEntry: false });
    } catch {
      return false; // EACCES, ENOTDIR, ELOOP: the caller fsyncs path by path, and reports what fails
    }
    if (st && !byDev.has(st.dev)) byDev.set(st.dev, d);
  }
  const syncs = [...byDev.values()].map(
    (d) =>
      new Promise<boolean>((resolve) => {
        execFile('sync', ['-f', d], { timeout: 600_000 }, (err) => resolve(!err));
      }),
  );
  started?.(); // the children are flushing: the caller's other work runs meanwhile
  const ok = await Promise.all(syncs);
  return ok.every(Boolean);
}

/**
 * `beforeCopy` runs once before a cross-filesystem copy (the commit journals it there if it had
 * not). Returns the first directory the move created on the way to its destination, if any.
 * `replay`: a journal's move after a crash, which may have been made already (its source is
 * gone); a commit's own move has its source (the rule's output, just hashed), and a missing one
 * is an error, not a move to skip.
 */
function applyMove(m: Move, beforeCopy: () => void, aside: Aside | undefined, replay: boolean): string | undefined {
  if (replay && !fs.existsSync(m.from)) return undefined; // already moved before a crash
  const created = ensureDir(path.dirname(m.to));
  try {
    renameInto(m.from, m.to, m.dir, aside);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e;
    beforeCopy();
    copyInto(m);
  }
  return created;
}

/** Remove a `.rc1-new`/`.rc1-old` leftover; a parent that is no directory (or a symlink loop) means there is none. */
function dropLeftover(p: string): void {
  try {
    rmrf(p);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'ENOTDIR' && code !== 'ELOOP') throw e;
  }
}

export class OutputCommitter {
  /** Directories that received outputs since the last syncTouched(). */
  private touched = new Set<string>();
  /** Committed files whose bytes are not fsynced yet (quick targets, restores). */
  private unsynced = new Set<string>();
  /**
   * Set when the per-path fsyncs would not cover everything this build made: outputs moved by a
   * journal's recovery (not listed one by one). syncTouched then prefers one syncfs per filesystem
   * whatever the number of paths.
   */
  private wholeFs = false;
  /** Run time (ms) of the targets committed since the last syncTouched() with outputs not yet fsynced. */
  private atRiskMs = 0;
  /** A target committed since the last syncTouched() had its outputs fsynced when hashed (a long rule). */
  private syncedAny = false;

  /** `top` and every folder below it down to `bottom` (inclusive), as folders to make durable. */
  private touchChain(top: string, bottom: string): void {
    for (let d = bottom; ; d = path.dirname(d)) {
      this.touched.add(d);
      if (d === top || d === path.dirname(d) || !d.startsWith(top)) break;
    }
  }

  /**
   * Unlinks of replaced outputs' aside names (renameInto): awaited at the end of the build
   * (syncTouched), and by `clean` after recover() (freed()).
   */
  private readonly freeing: Promise<void>[] = [];
  private asideSeq = 0;
  private readonly aside: Aside = {
    link: (to) => {
      // A name no temporary output has (theirs begin with a pid); the build's start and an
      // interrupt empty .rc1/tmp, so a kill leaves none for long.
      const p = path.join(this.tmpDir, `replaced-${process.pid}-${++this.asideSeq}`);
      try {
        fs.linkSync(to, p);
        return p;
      } catch {
        return null; // another filesystem, no hard links, no .rc1/tmp: a plain rename
      }
    },
    release: (p) => {
      this.freeing.push(new Promise((resolve) => fs.unlink(p, () => resolve())));
    },
  };

  constructor(
    private readonly root: string,
    private readonly journalDir: string,
    private readonly trace: TraceLog,
    private readonly stat: StatCache,
    /** The build's temporary directory (.rc1/tmp), where replaced outputs are linked aside. */
    private readonly tmpDir: string,
  ) {}

  /** Any refusal (errno) of a move — ENOSPC as much as a file where a directory should be — names its path. */
  private move(m: Move, beforeCopy: () => void = () => {}, replay = false): void {
    try {
      // Folders the move created are new entries of their parents: the first one's parent and
      // each of them down to the output's folder join the folders to make durable.
      const first = applyMove(m, beforeCopy, this.aside, replay);
      if (first !== undefined) this.touchChain(path.dirname(first), path.dirname(m.to));
    } catch (e) {
      if (e instanceof EngineWriteError || typeof (e as NodeJS.ErrnoException | null)?.code !== 'string') throw e;
      throw new EngineWriteError(`output${m.dir ? ' directory' : ''}`, m.to, e as NodeJS.ErrnoException, this.root);
    }
    this.touched.add(path.dirname(m.to));
  }

  /** `redoMs`: what running the target again would cost (its rule's own run time; default record.ms). */
  commit(record: TargetRecord, hashed: HashedOutput[], redoMs: number = record.ms): void {
    const moves: Move[] = hashed.map((h) => ({ from: h.tmp, to: path.join(this.root, h.path), dir: h.dir }));
    if (hashed.some((h) => h.synced)) this.syncedAny = true;
    if (hashed.some((h) => !h.synced)) this.atRiskMs += redoMs;
    // One file: its rename is atomic by itself, and a kill before the trace line leaves the old
    // record, whose hash no longer matches: stale, never fresh. Sets and directories: journal.
    // A single file copied across filesystems is journaled just before its copy, so a kill
    // mid-copy leaves no `<path>.rc1-new` that nothing would remove.
    const file = path.join(this.journalDir, `${encodeURIComponent(record.name)}.json`);
    let journal: string | null = null;
    const writeJournal = (): void => {
      if (journal) return;
      journal = file;
      engineWrite(
        'the commit journal',
        file,
        () => writeFileAtomic(file, JSON.stringify({ record, moves } satisfies Journal)),
        this.root,
      );
    };
    if (moves.length > 1 || moves.some((m) => m.dir)) writeJournal();
    faultPause();
    const journalCopy = (): void => {
      if (journal) return;
      writeJournal();
      faultPause();
    };
    for (const m of moves) {
      this.move(m, journalCopy);
      faultPause();
    }
    this.trace.put(record);
    this.remember(hashed);
    if (journal) fs.rmSync(journal, { force: true });
  }

  /**
   * Record each committed file's stat as it is now, in place: a rename moves ctime (and a copy
   * makes a new inode), so the stat taken when the output was hashed would never match again.
   */
  private remember(hashed: HashedOutput[]): void {
    for (const h of hashed) {
      for (const [rel, [sha, size]] of Object.entries(h.files)) {
        const p = rel === '' ? h.path : `${h.path}/${rel}`;
        const st = fs.lstatSync(path.join(this.root, p), { bigint: true, throwIfNoEntry: false });
        if (st?.isFile() && Number(st.size) === size) this.stat.store(p, sha, st, h.statTimeNs);
        else this.stat.forget(p);
        if (!h.synced && FSYNC) this.unsynced.add(path.join(this.root, p));
        // A directory output not synced when hashed: every folder of its tree down to this file's
        // (a synced one had all of them fsynced with its files, runner/hash-output.ts).
        if (h.dir && !h.synced) this.touchChain(path.join(this.root, h.path), path.dirname(path.join(this.root, p)));
        else if (h.dir) this.touched.add(path.dirname(path.join(this.root, p)));
      }
    }
  }

  /**
   * Once per build, before the stat cache is saved: make the committed files not yet synced and
   * the directories that received outputs durable, then fsync the trace log. Up to
   * SYNCFS_ABOVE paths (and no journal recovered), each file, each folder that received one or
   * was created on the way (for a directory output not synced when hashed: every folder of its
   * tree), and each such folder's parent is fsynced, concurrently on libuv's thread pool
   * (the filesystem batches them into few journal commits). Above it one syncfs(2) per
   * filesystem (`sync -f`, coreutils) does it in one call; where that fails, per-file fsync again.
   * `meanwhile` runs once, on this thread, while the syncfs children flush (else before the trace's
   * fsync): work that needs none of this durable (the sidecars, writeSidecars). What it throws is
   * thrown once the syncs are done. True when one syncfs per filesystem did it (which covers every
   * file there, not only this build's).
   */
  async syncTouched(meanwhile?: () => void): Promise<boolean> {
    let ran = false;
    let failed: { error: unknown } | null = null;
    const runMeanwhile = (): void => {
      if (ran || !meanwhile) return;
      ran = true;
      try {
        meanwhile();
      } catch (e) {
        failed = { error: e };
      }
    };
    await this.freed(); // the replaced outputs' blocks, freed off the commits
    // This build's lists, taken now: a commit that lands while these syncs run (a restore decided
    // before an interrupt) goes to the next call's lists instead of being cleared unsynced.
    let unsynced = this.unsynced;
    let touched = this.touched;
    const wholeFs = this.wholeFs;
    this.unsynced = new Set();
    this.touched = new Set();
    this.wholeFs = false;
    this.atRiskMs = 0;
    this.syncedAny = false;
    let whole = false;
    if (FSYNC && (wholeFs || unsynced.size + touched.size > SYNCFS_ABOVE)) {
      if (await syncFilesystemsOf(touched, runMeanwhile)) {
        unsynced = new Set();
        touched = new Set();
        whole = true;
      }
    }
    if (FSYNC) {
      // Each folder's parent too (inside the workspace): a folder a rule's worker made (ctx.state)
      // or an interrupted build left is a new entry there that no move of this build reported.
      for (const d of [...touched]) {
        const up = path.dirname(d);
        if (up.startsWith(this.root)) touched.add(up);
      }
      // A file the engine may not open (a rule's chmod): its filesystem's syncfs covers it without
      // opening it, one per folder however many such files; only when that fails is it an error.
      const fallback = new Map<string, Promise<boolean>>();
      const syncAll = async (paths: Iterable<string>, what: string): Promise<void> => {
        const list = [...paths];
        if (list.length === 0) return;
        const { open } = await import('node:fs/promises');
        for (let i = 0; i < list.length; i += 64) {
          await Promise.all(
            list.slice(i, i + 64).map(async (p) => {
              let fh: fsp.FileHandle | null = null;
              try {
                fh = await open(p, 'r');
                await fh.sync();
              } catch (e) {
                const code = (e as NodeJS.ErrnoException).code;
                if (code === 'ENOENT') return; // replaced since
                if (code === 'EACCES' || code === 'EPERM') {
                  const dir = path.dirname(p);
                  if (!fallback.has(dir)) fallback.set(dir, syncFilesystemsOf([dir]));
                  if (await fallback.get(dir)) return;
                }
                engineWrite(
                  what,
                  p,
                  () => {
                    throw e;
                  },
                  this.root,
                );
              } finally {
                await fh?.close();
              }
            }),
          );
        }
      };
      await syncAll(unsynced, 'output');
      await syncAll(touched, 'directory');
    }
    runMeanwhile();
    this.trace.sync();
    if (failed) throw (failed as { error: unknown }).error;
    return whole;
  }

  /**
   * The end of a build (also an interrupted one): make what it committed durable (syncTouched), or
   * leave it to the kernel's write-back where that work is cheaper to redo after a power cut than
   * a sync is to wait for (state/durability.ts): no output was fsynced when hashed, no journal was
   * recovered, the committed targets' run times sum to less than DURABLE_AFTER_MS, and the boot
   * can be read. `durableBefore`: whether all that earlier builds wrote is known to be on disk;
   * when not, a sync is one syncfs per filesystem of the root, of this build's folders and of
   * `moreDirs()` (where earlier builds may have written), which covers their files too (where
   * that fails, this build's files are fsynced one by one and earlier ones stay not durable).
   * RC1_FSYNC=off syncs nothing. Returns whether everything the builds wrote is on disk now.
   */
  async finishBuild(
    meanwhile: () => void,
    durableBefore: boolean,
    moreDirs: () => Iterable<string> = () => [],
  ): Promise<boolean> {
    const committed = this.unsynced.size > 0 || this.touched.size > 0 || this.wholeFs || this.syncedAny;
    if (!committed || !FSYNC || (!this.syncedAny && !this.wholeFs && this.atRiskMs < DURABLE_AFTER_MS && bootId())) {
      await this.freed();
      this.unsynced = new Set();
      this.touched = new Set();
      this.atRiskMs = 0;
      meanwhile();
      return committed ? false : durableBefore && FSYNC;
    }
    if (!durableBefore) {
      this.wholeFs = true;
      this.touched.add(this.root);
      for (const d of moreDirs()) this.touched.add(d);
    }
    const whole = await this.syncTouched(meanwhile);
    return durableBefore || whole;
  }

  /** Resolves once every unlink of a replaced output's aside name started so far is done. */
  async freed(): Promise<void> {
    await Promise.all(this.freeing.splice(0));
  }

  /**
   * Roll forward every journal a killed build left behind. The outputs it replaces are freed by
   * unlinks off the main thread: the caller awaits them (syncTouched, or freed()). A journal that cannot be rolled
   * forward (the filesystem refuses a move) is removed and its target recorded as failed, so
   * it rebuilds; it is reported, never thrown.
   */
  recover(): Recovery {
    const out: Recovery = { recovered: [], failed: [] };
    let names: string[];
    try {
      names = fs.readdirSync(this.journalDir).filter((n) => n.endsWith('.json'));
    } catch {
      return out;
    }
    for (const n of names) {
      const file = path.join(this.journalDir, n);
      const j = readJsonOrNull<Journal>(file);
      if (j?.record && Array.isArray(j.moves)) {
        try {
          for (const m of j.moves) dropLeftover(`${m.to}.rc1-new`);
          this.wholeFs = true; // the recovered files were never counted as unsynced
          for (const m of j.moves) {
            this.move(m, undefined, true);
            // A directory whose rename was done before the kill: its old copy may be left aside.
            if (m.dir) dropLeftover(`${m.to}.rc1-old`);
          }
          this.trace.put(j.record);
          out.recovered.push(j.record.name);
        } catch (e) {
          // Whatever stops the roll-forward (a plain file where an output's directory should be,
          // a dangling symlink, a full disk) is reported, never thrown: the workspace must not wedge.
          const error = `its interrupted commit could not be completed: ${e instanceof Error ? e.message : String(e)}`;
          for (const m of j.moves) {
            try {
              rmrf(`${m.to}.rc1-new`);
            } catch {
              /* best effort: the target runs again anyway */
            }
          }
          // Outputs may now be half old, half new: a failed record makes the target run again.
          this.trace.put({ ...j.record, outputs: [], result: 'failed', error, how: 'ran' });
          out.failed.push({ target: j.record.name, error });
        }
      }
      engineWrite('the commit journal', file, () => fs.rmSync(file, { force: true }), this.root);
    }
    return out;
  }
}
