// ERROR reports: when a rule fails, reports/ERROR_<ts>.json records what a person needs to
// diagnose it without rerunning: target, rule, the error (stack for crashes), the last 200 log
// lines, why the target was running, profile and git state. Secrets were already redacted by
// the caller. Not an artifact: never in the manifest, never an input. A write the filesystem
// refuses is an EngineWriteError naming the report's path and filesystem.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { prettyJson } from '../util/canonical-json.ts';
import { writeFileAtomic } from '../util/fs.ts';
import { engineWrite } from '../util/write-error.ts';

export interface ErrorReport {
  target: string;
  rule: string;
  kind: string;
  error: string;
  reasons: string[];
  profile: string;
  git: { commit: string | null; dirty: boolean | null };
  log_tail: string[];
}

/** A sortable UTC timestamp for file names: 20261126T041200123Z. */
export function fileTimestamp(d = new Date()): string {
  return d.toISOString().replace(/[-:]/g, '').replace('.', '');
}

/** Writes reports/ERROR_<ts>.json (a -2, -3… suffix if two failures share a millisecond); returns its path. */
export function writeErrorReport(root: string, r: ErrorReport): string {
  const ts = fileTimestamp();
  let rel = `reports/ERROR_${ts}.json`;
  for (let i = 2; fs.existsSync(path.join(root, rel)); i++) rel = `reports/ERROR_${ts}-${i}.json`;
  const file = path.join(root, rel);
  engineWrite(
    'the error report',
    file,
    () => writeFileAtomic(file, prettyJson({ ...r, at: new Date().toISOString(), log_tail: r.log_tail.slice(-200) })),
    root,
  );
  return rel;
}
