// Where inputs and outputs may live. Every declared input and output must lie inside the workspace
// — lexically when the pipeline is resolved, and after following symlinks before anything is built
// or cleaned — unless it lies inside one of the pipeline's declared `externalRoots` (directories
// outside the workspace, say a shared dataset mount or a big disk, named in definePipeline). An
// input may name a path inside an external root directly; an output is always declared as a
// workspace path, and may reach an external root only through a symlink (checkpoints/ → a bigger
// disk), so `clean` never deletes anywhere that was not declared. Some paths are
// never outputs: the engine's state (.rc1/), git (.git/), the declaration (rc1.build.ts), rule
// code (rules/ and every target's rule module) and node_modules/. Problems are Diagnostics; the
// callers raise them as one UsageError (exit 64) naming the target's rc1.build.ts line.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Diagnostic } from '../config/usage-error.ts';
import type { ResolvedPipeline, ResolvedTarget } from './resolved.ts';

/** Workspace-relative paths (and folders) that no target may write. */
export const NEVER_OUTPUTS = ['.rc1', '.git', 'rc1.build.ts', 'rules', 'node_modules'];

const GLOB_CHARS = /[*?[\]{}()!]/;

/** The part of a path before its first glob component ('data/raw/*.jsonl' → 'data/raw'). */
export function staticPrefix(p: string): string {
  const parts = p.split('/');
  const i = parts.findIndex((c) => GLOB_CHARS.test(c));
  return i < 0 ? p : parts.slice(0, i).join('/') || '.';
}

function within(abs: string, dir: string): boolean {
  return abs === dir || abs.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);
}

/** The external roots as absolute, normalised paths (relative ones are relative to the workspace). */
export function absoluteRoots(root: string, externalRoots: readonly string[]): string[] {
  return externalRoots.map((r) => path.resolve(root, r));
}

/** Why a declared path (workspace-relative or absolute, normalised) may not be used, or null. */
export function lexicalProblem(root: string, p: string, externalRoots: readonly string[]): string | null {
  const abs = path.resolve(root, staticPrefix(p));
  if (within(abs, root)) return null;
  if (absoluteRoots(root, externalRoots).some((r) => within(abs, r))) return null;
  return 'is outside the workspace';
}

/** Why a workspace-relative output path may never be an output, or null. */
export function forbiddenOutput(p: string, ruleFiles: ReadonlySet<string>): string | null {
  if (p === '.' || p === '') return 'is the workspace itself';
  for (const f of NEVER_OUTPUTS) {
    if (p === f) return `is ${f}, which the engine, git or the rules own`;
    if (p.startsWith(f + '/')) return `lies under ${f}/, which the engine, git or the rules own`;
  }
  if (ruleFiles.has(p)) return 'is the source of a rule';
  for (const r of ruleFiles) if (r.startsWith(p + '/')) return `would hold the rule source ${r}`;
  return null;
}

/** realpath of p, or of its deepest existing ancestor with the rest appended. */
function realish(abs: string): string {
  const rest: string[] = [];
  let cur = abs;
  for (;;) {
    try {
      return path.join(fs.realpathSync(cur), ...rest.reverse());
    } catch {
      const parent = path.dirname(cur);
      if (parent === cur) return abs;
      rest.push(path.basename(cur));
      cur = parent;
    }
  }
}

/** The real (symlink-free) workspace and external roots, where every input and output must end up. */
export function realRoots(p: Pick<ResolvedPipeline, 'root' | 'externalRoots'>): string[] {
  return [realish(p.root), ...absoluteRoots(p.root, p.externalRoots ?? []).map(realish)];
}

/** Whether a real path lies in one of the real roots. */
export function insideRoots(real: string, roots: readonly string[]): boolean {
  return roots.some((r) => within(real, r));
}

/**
 * A checker for the files a glob matched (fast-glob follows symlinks, so a matched file or a folder
 * under ** may lead out): the first file whose real location is outside the roots, with where it
 * leads, or null. One realpath per distinct directory, and an lstat per file; used when a glob is
 * (re)expanded, never on the cached no-op path.
 */
export function globEscapeChecker(
  root: string,
  roots: readonly string[],
): (files: readonly string[]) => { file: string; real: string } | null {
  const dirs = new Map<string, string>();
  return (files) => {
    for (const f of files) {
      const abs = path.resolve(root, f);
      const dir = path.dirname(abs);
      let realDir = dirs.get(dir);
      if (realDir === undefined) {
        realDir = realish(dir);
        dirs.set(dir, realDir);
      }
      const st = fs.lstatSync(abs, { throwIfNoEntry: false });
      const real = st?.isSymbolicLink() ? realish(abs) : path.join(realDir, path.basename(abs));
      if (!insideRoots(real, roots)) return { file: f, real };
    }
    return null;
  };
}

/**
 * The symlink check: every output, and every input file and glob base, of the given targets must
 * resolve (the files a glob matches are checked when it is expanded: globEscapeChecker) (following symlinks) inside the real workspace or a real external root. One realpath per
 * distinct directory (plus an lstat per source input file), so a no-op of RC1 pays well under a
 * millisecond.
 */
export function pathsOnDiskProblems(
  p: ResolvedPipeline,
  names: Iterable<string>,
  where: (t: ResolvedTarget) => string,
): Diagnostic[] {
  const roots = realRoots(p);
  const realRoot = roots[0]!;
  // Per distinct directory: its real path, and whether that lies inside a root. A name in such a
  // directory that is not itself a symlink lies inside too (the common case, decided without
  // building its real path); anything else gets the full answer.
  const dirCache = new Map<string, { real: string; inside: boolean }>();
  const realDirOf = (dir: string): { real: string; inside: boolean } => {
    let d = dirCache.get(dir);
    if (d === undefined) {
      const real = realish(dir);
      d = { real, inside: roots.some((r) => within(real, r)) };
      dirCache.set(dir, d);
    }
    return d;
  };
  // Declared paths are normalised (load-pipeline): a relative one without '..' joins the root by
  // string, without path.resolve's re-normalisation (2 000 paths on a 1 000-target no-op).
  const base = p.root.endsWith(path.sep) ? p.root : p.root + path.sep;
  const absOf = (rel: string): string =>
    path.sep === '/' && !rel.startsWith('/') && !rel.includes('..') && rel !== '.'
      ? base + rel
      : path.resolve(p.root, rel);
  const dirOf = (abs: string): string => {
    const i = abs.lastIndexOf(path.sep);
    return i > 0 && path.sep === '/' ? abs.slice(0, i) : path.dirname(abs);
  };
  /** The real path of rel when it lies outside every root, else null. */
  const outside = (rel: string, entry: boolean): string | null => {
    const abs = absOf(rel);
    const d = realDirOf(dirOf(abs));
    // An input file may itself be a symlink that leads out. (An output that is a symlink is not
    // followed: a commit renames over the link and clean removes the link, never what it names.)
    const link = entry && fs.lstatSync(abs, { throwIfNoEntry: false })?.isSymbolicLink() === true;
    if (d.inside && !link) return null;
    const real = link ? realish(abs) : path.join(d.real, path.basename(abs));
    return roots.some((r) => within(real, r)) ? null : real;
  };
  const diags: Diagnostic[] = [];
  for (const name of names) {
    const t = p.targets.get(name);
    if (!t) continue;
    const check = (kind: string, rel: string): void => {
      const real = outside(rel, kind === 'input');
      if (real === null) return;
      diags.push({
        headline: `target ${t.name}: ${kind} ${rel} resolves outside the workspace, to ${real}`,
        location: where(t),
        hint: 'a symlink on the way leads out of the workspace; declare the directory in definePipeline({ externalRoots: [...] }) if that is intended',
      });
    };
    for (const o of t.outputs) check('output', o.path);
    for (const g of t.inputs) {
      for (const it of g.items) {
        if (it.kind === 'file' && !it.producer)
          check('input', it.path); // a producer's output is checked as its output
        else if (it.kind === 'glob') check('input', staticPrefix(it.pattern));
      }
    }
  }
  // The manifest dir itself is followed too: the manifest dir being a symlink out is refused.
  const manifestReal = realish(path.resolve(p.root, p.manifestDir));
  if (!within(manifestReal, realRoot)) {
    diags.push({
      headline: `manifestDir ${p.manifestDir} resolves outside the workspace, to ${manifestReal}`,
      hint: 'the manifest lives inside the workspace',
    });
  }
  return diags;
}
