// Moves a finished rule's outputs from its temp root into place and records the target, as one
// recoverable step: a journal (the record plus the list of moves) is written first, then the
// renames, then the trace line, then the journal is removed. A build killed in between leaves a
// journal that the next build (holding the lock) rolls forward, so a multi-file output set ends
// up fully in place with its record, or — if killed before the journal — not at all, with the old
// record still describing the old outputs (any mix of old and new is then seen as stale).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { StatCache } from '../hash/stat-cache.ts';
import type { HashedOutput } from '../runner/protocol.ts';
import { ensureDir, readJsonOrNull, rmrf, writeFileAtomic } from '../util/fs.ts';
import type { OutputRecord, TargetRecord, TraceLog } from './trace-log.ts';

interface Move { from: string; to: string; dir: boolean }
interface Journal { record: TargetRecord; moves: Move[] }

export function outputRecords(hashed: HashedOutput[]): OutputRecord[] {
  return hashed.map((h) => ({
    path: h.path, sha256: h.sha256, size: h.size, dir: h.dir,
    ...(h.dir ? { files: Object.fromEntries(Object.entries(h.files).map(([rel, [sha]]) => [rel, sha])), links: h.links ?? {} } : {}),
  }));
}

function applyMove(m: Move): void {
  if (!fs.existsSync(m.from)) return; // already moved before a crash
  ensureDir(path.dirname(m.to));
  if (m.dir) {
    const old = `${m.to}.rc1-old`;
    rmrf(old);
    if (fs.existsSync(m.to)) fs.renameSync(m.to, old);
    fs.renameSync(m.from, m.to);
    rmrf(old);
  } else {
    const st = fs.lstatSync(m.to, { throwIfNoEntry: false });
    if (st?.isDirectory()) rmrf(m.to);
    fs.renameSync(m.from, m.to);
  }
}

export class OutputCommitter {
  constructor(
    private readonly root: string,
    private readonly journalDir: string,
    private readonly trace: TraceLog,
    private readonly stat: StatCache,
  ) {}

  commit(record: TargetRecord, hashed: HashedOutput[]): void {
    const moves: Move[] = hashed.map((h) => ({ from: h.tmp, to: path.join(this.root, h.path), dir: h.dir }));
    // One file: its rename is atomic by itself, and a kill before the trace line leaves the old
    // record, whose hash no longer matches: stale, never fresh. Sets and directories: journal.
    const journal = moves.length > 1 || moves.some((m) => m.dir) ? path.join(this.journalDir, `${encodeURIComponent(record.name)}.json`) : null;
    if (journal) writeFileAtomic(journal, JSON.stringify({ record, moves } satisfies Journal));
    for (const m of moves) applyMove(m);
    this.trace.put(record);
    for (const h of hashed) {
      for (const [rel, [sha, size, mtimeNs, ino]] of Object.entries(h.files)) {
        this.stat.store(rel === '' ? h.path : `${h.path}/${rel}`, sha, { size: BigInt(size), mtimeNs, ino }, h.statTimeNs);
      }
    }
    if (journal) fs.rmSync(journal, { force: true });
  }

  /** Roll forward every journal a killed build left behind. Returns the targets recovered. */
  recover(): string[] {
    let names: string[];
    try {
      names = fs.readdirSync(this.journalDir).filter((n) => n.endsWith('.json'));
    } catch {
      return [];
    }
    const done: string[] = [];
    for (const n of names) {
      const file = path.join(this.journalDir, n);
      const j = readJsonOrNull<Journal>(file);
      if (j && j.record && Array.isArray(j.moves)) {
        for (const m of j.moves) applyMove(m);
        this.trace.put(j.record);
        done.push(j.record.name);
      }
      fs.rmSync(file, { force: true });
    }
    return done;
  }
}
