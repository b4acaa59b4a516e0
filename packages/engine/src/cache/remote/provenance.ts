// Who built each artifact: fingerprint key → the key id (and trust-list name) of the writer whose
// signed entry it was restored from, or of this machine's signing key when it was built here and
// uploaded. Kept in .rc1/provenance.json beside the trace, independent of the remote cache being
// on, so the manifest says the same thing on every later build; entries for keys that no target
// records any more are dropped when the manifest is written.
import * as path from 'node:path';
import { readJsonOrNull, writeFileAtomic } from '../../util/fs.ts';

export interface BuiltBy {
  key: string;
  name: string;
}

export function provenanceFile(stateDir: string): string {
  return path.join(stateDir, 'provenance.json');
}

/** The saved map, or an empty one. */
export function readProvenance(stateDir: string): Record<string, BuiltBy> {
  const doc = readJsonOrNull<{ format: number; builtBy: Record<string, BuiltBy> }>(provenanceFile(stateDir));
  return doc && doc.format === 1 && doc.builtBy && typeof doc.builtBy === 'object' ? doc.builtBy : {};
}

export class Provenance {
  private readonly added = new Map<string, BuiltBy>();
  constructor(private readonly stateDir: string) {}

  set(key: string, by: BuiltBy): void {
    this.added.set(key, by);
  }

  /** Merge what this build learnt into the file, keeping only `keep` keys when given. */
  save(keep?: ReadonlySet<string>): void {
    if (!this.added.size) return;
    const all = { ...readProvenance(this.stateDir), ...Object.fromEntries(this.added) };
    const kept = keep ? Object.fromEntries(Object.entries(all).filter(([k]) => keep.has(k))) : all;
    writeFileAtomic(provenanceFile(this.stateDir), JSON.stringify({ format: 1, builtBy: kept }));
  }
}
