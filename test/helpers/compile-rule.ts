// Compiles a rule (or any module of the repository) exactly as the engine does — through the
// engine's own ModuleCompiler: 'rc1-build' and 'rc1-build/<dir>' resolve to src/<dir>/index.ts and
// npm packages stay external at their absolute paths — and imports it. Unit tests use it to call a
// rule's run() with a fake context.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ModuleCompiler } from '../../packages/engine/src/config/compile-module.ts';
import { StatCache } from '../../packages/engine/src/hash/stat-cache.ts';

export const REPO_ROOT = resolve(fileURLToPath(import.meta.url), '../../..');

let compiler: ModuleCompiler | null = null;

/** Imports the compiled form of a repository file (absolute path or relative to the repository). */
export async function importCompiled<T = unknown>(file: string): Promise<T> {
  if (!compiler) {
    const state = mkdtempSync(join(tmpdir(), 'rc1-compile-'));
    compiler = new ModuleCompiler(REPO_ROOT, state, new StatCache(REPO_ROOT, join(state, 'statcache.json')));
  }
  const out = await compiler.compiled(relative(REPO_ROOT, resolve(REPO_ROOT, file)));
  return (await import(pathToFileURL(out).href)) as T;
}
