// Whether what the builds wrote is on disk, and when a record of file stats may be trusted.
//
// A build makes its outputs durable at its end (OutputCommitter.syncTouched: fsyncs, or one
// syncfs per filesystem), unless the work it would protect is cheaper to redo than the sync: no
// output was fsynced when hashed (no rule ran ≥ DURABLE_AFTER_MS), no journal was recovered, and
// the committed targets' run times sum to less than DURABLE_AFTER_MS. A syncfs waits for every
// dirty page of the filesystem, other processes' too (bench/results/speed.md, nineteenth pass).
//
// What keeps that safe is a mark on every record that lets the engine skip reading a file because
// its stat is unchanged (the stat cache, the glob cache, the manifest state, the up-to-date
// stamp): the boot it was written in (/proc/sys/kernel/random/boot_id) and whether everything
// the builds had written was durable then. A record marked not durable is trusted only in the
// boot that wrote it: within one boot every process reads the same page cache, whatever has
// reached the disk, and a power cut or a crash of the machine is a new boot. After one, the next
// command finds the mark of another boot, drops the record, and hashes each file by content: an
// output a power cut lost or tore reads as stale, never as up to date. Where the boot cannot be
// read (not Linux), every build syncs, as before. RC1_FSYNC=off (no fsync at all) marks every
// record not durable, so a reboot after such builds costs one re-hash, never a stale output.
//
// Fault injection for tests: RC1_FAULT_BOOT_ID=X reads as the boot id (a test's "reboot").
import { readBootId } from './process-identity.ts';

/**
 * A rule that ran at least this long has its outputs fsynced before their commit
 * (runner/hash-output.ts); a build whose committed targets' run times sum to less leaves them to
 * the kernel's write-back (OutputCommitter.finishBuild).
 */
export const DURABLE_AFTER_MS = 1000;

/** How a stat-keyed record was written: in which boot, and whether what it describes was durable. */
export interface DurabilityMark {
  boot?: string | null;
  durable?: boolean;
}

let boot: string | null | undefined;

/** This machine's boot id, or null where there is none to read. */
export function bootId(): string | null {
  const fault = process.env.RC1_FAULT_BOOT_ID;
  if (fault) return fault;
  if (boot === undefined) boot = readBootId();
  return boot;
}

/** The mark to write on a record now. */
export function markNow(durable: boolean): Required<DurabilityMark> {
  return { boot: bootId(), durable };
}

/**
 * Whether a record with this mark may be trusted now: written when everything was durable (a
 * record without a mark predates this rule and was written after a sync), or in this boot.
 */
export function trusted(mark: DurabilityMark | null | undefined, now?: string | null): boolean {
  if (mark?.durable !== false) return true; // no boot id read on this path
  const current = now === undefined ? bootId() : now;
  return current !== null && mark.boot === current;
}
