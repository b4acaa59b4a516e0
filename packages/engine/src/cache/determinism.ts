// Determinism verdicts: what `rc1-build check-determinism` found when it built a target twice in
// scratch dirs, kept in .rc1/determinism.json, and the question an upload to a shared (remote)
// cache asks before it publishes a target's outputs: mayUpload(). A target whose two builds gave
// different bytes is not uploaded by default: another machine restoring it would get one of many
// possible outputs under a key that claims to determine them. A target never checked may be
// uploaded; a flagged target stays flagged until a later check passes (a code change alone does
// not clear it: the record says which key was checked).
//
// Also here: where two builds' outputs first differ (file, byte, line, column, the two lines).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { HashedOutput } from '../runner/protocol.ts';
import { writeFileAtomic } from '../util/fs.ts';

export const DETERMINISM_FILE = 'determinism.json';
const FORMAT = 1;

/** Where the outputs of two builds first differ. */
export interface FirstDifference {
  /** The declared output. */
  output: string;
  /** The file (for a directory output: the output path plus the file inside it). */
  file: string;
  /** 'bytes': the file differs at `byte`; 'only-in-run-1/2': the file exists in one build only; 'link': a symbolic link differs. */
  kind: 'bytes' | 'only-in-run-1' | 'only-in-run-2' | 'link';
  /** 0-based offset of the first differing byte (kind 'bytes'). */
  byte?: number;
  /** 1-based line and column of that byte (text files). */
  line?: number;
  column?: number;
  /** The line (text) or 16 bytes in hex (binary) around it, in each build. */
  run1?: string;
  run2?: string;
  /** sha256 of the output in each build. */
  sha256: [string, string];
}

export interface DeterminismVerdict {
  target: string;
  deterministic: boolean;
  /** The target's key (fingerprint) when it was checked. */
  key: string;
  checkedAt: string;
  /** One first difference per output that differed. */
  differences?: FirstDifference[];
}

interface Stored {
  format: typeof FORMAT;
  targets: Record<string, DeterminismVerdict>;
}

/** Every recorded verdict of the workspace whose state dir is `stateDir` (.rc1/). */
export function readVerdicts(stateDir: string): Record<string, DeterminismVerdict> {
  try {
    const doc = JSON.parse(fs.readFileSync(path.join(stateDir, DETERMINISM_FILE), 'utf8')) as Stored;
    return doc.format === FORMAT && doc.targets ? doc.targets : {};
  } catch {
    return {};
  }
}

/** Adds (or replaces) verdicts, keeping the others. */
export function recordVerdicts(stateDir: string, verdicts: readonly DeterminismVerdict[]): void {
  const all = readVerdicts(stateDir);
  for (const v of verdicts) all[v.target] = v;
  const sorted = Object.fromEntries(
    Object.keys(all)
      .sort()
      .map((k) => [k, all[k]!]),
  );
  writeFileAtomic(
    path.join(stateDir, DETERMINISM_FILE),
    `${JSON.stringify({ format: FORMAT, targets: sorted } satisfies Stored, null, 1)}\n`,
  );
}

/**
 * For the upload path of a remote cache: may this target's outputs be published? No when
 * check-determinism found its two builds differ (unless `allowNonDeterministic`, a setting of the
 * remote cache); yes when it passed or was never checked. `reason` is one line for the build's log.
 */
export function mayUpload(
  stateDir: string,
  target: string,
  opts: { allowNonDeterministic?: boolean } = {},
): { upload: boolean; reason: string } {
  const v = readVerdicts(stateDir)[target];
  if (!v) return { upload: true, reason: 'never checked by check-determinism' };
  if (v.deterministic) return { upload: true, reason: `check-determinism passed (${v.checkedAt})` };
  const d = v.differences?.[0];
  const where = d ? `${d.file}${d.byte !== undefined ? ` at byte ${d.byte}` : ` (${d.kind})`}` : 'its outputs';
  if (opts.allowNonDeterministic)
    return { upload: true, reason: `non-deterministic (${where}), uploaded because the remote cache allows it` };
  return {
    upload: false,
    reason: `not uploaded: check-determinism found two builds differ in ${where} (${v.checkedAt}); fix the rule and run rc1-build check-determinism ${target} again`,
  };
}

const EXCERPT = 120;

function isBinary(b: Buffer): boolean {
  return b.subarray(0, 8192).includes(0);
}

function lineAround(b: Buffer, at: number): string {
  const start = b.lastIndexOf(10, at - 1) + 1;
  let end = b.indexOf(10, at);
  if (end < 0) end = b.length;
  let s = b.toString('utf8', start, end);
  if (s.length > EXCERPT) {
    const col = b.toString('utf8', start, Math.min(at, end)).length;
    const from = Math.max(0, col - EXCERPT / 2);
    s = `${from > 0 ? '…' : ''}${s.slice(from, from + EXCERPT)}…`;
  }
  return s;
}

function hexAround(b: Buffer, at: number): string {
  const from = Math.max(0, at - 8);
  return `@${from}: ${b
    .subarray(from, from + 16)
    .toString('hex')
    .replace(/(..)(?!$)/g, '$1 ')}`;
}

/** The first differing byte of two files, with its line and column and the two lines (or hex for binary files). */
export function firstByteDifference(
  a: string,
  b: string,
): Pick<FirstDifference, 'byte' | 'line' | 'column' | 'run1' | 'run2'> | null {
  const x = fs.readFileSync(a);
  const y = fs.readFileSync(b);
  const n = Math.min(x.length, y.length);
  let i = 0;
  while (i < n && x[i] === y[i]) i++;
  if (i === n && x.length === y.length) return null;
  if (isBinary(x) || isBinary(y))
    return {
      byte: i,
      run1: i < x.length ? hexAround(x, i) : '(ends here)',
      run2: i < y.length ? hexAround(y, i) : '(ends here)',
    };
  const before = x.subarray(0, i);
  const lineStart = before.lastIndexOf(10) + 1;
  let line = 1;
  for (const c of before) if (c === 10) line++;
  return {
    byte: i,
    line,
    column: x.toString('utf8', lineStart, i).length + 1,
    run1: i < x.length ? lineAround(x, i) : '(ends here)',
    run2: i < y.length ? lineAround(y, i) : '(ends here)',
  };
}

/** Where two builds of one output first differ (null: identical). Files are read from each build's temporary path. */
export function outputDifference(o1: HashedOutput, o2: HashedOutput): FirstDifference | null {
  if (o1.sha256 === o2.sha256) return null;
  const sha256: [string, string] = [o1.sha256, o2.sha256];
  if (!o1.dir) return { output: o1.path, file: o1.path, kind: 'bytes', ...firstByteDifference(o1.tmp, o2.tmp), sha256 };
  const names = [
    ...new Set([
      ...Object.keys(o1.files),
      ...Object.keys(o2.files),
      ...Object.keys(o1.links ?? {}),
      ...Object.keys(o2.links ?? {}),
    ]),
  ].sort();
  for (const rel of names) {
    const file = `${o1.path}/${rel}`;
    const l1 = o1.links?.[rel];
    const l2 = o2.links?.[rel];
    if (l1 !== undefined || l2 !== undefined) {
      if (l1 !== l2)
        return {
          output: o1.path,
          file,
          kind:
            l1 === undefined && !o1.files[rel]
              ? 'only-in-run-2'
              : l2 === undefined && !o2.files[rel]
                ? 'only-in-run-1'
                : 'link',
          run1: l1 ?? '(no link)',
          run2: l2 ?? '(no link)',
          sha256,
        };
      continue;
    }
    const f1 = o1.files[rel];
    const f2 = o2.files[rel];
    if (!f1) return { output: o1.path, file, kind: 'only-in-run-2', sha256 };
    if (!f2) return { output: o1.path, file, kind: 'only-in-run-1', sha256 };
    if (f1[0] !== f2[0])
      return {
        output: o1.path,
        file,
        kind: 'bytes',
        ...firstByteDifference(path.join(o1.tmp, rel), path.join(o2.tmp, rel)),
        sha256,
      };
  }
  return { output: o1.path, file: o1.path, kind: 'bytes', sha256 }; // same files, same bytes: cannot happen for different listings
}
