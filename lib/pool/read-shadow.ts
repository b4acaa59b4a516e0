// Reading the shadow_set target's outputs among a rule's inputs: the manifest whose `source_ids`
// the seed pool must never use, and the shadow scenarios the leak check compares against.
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Scenario } from '../data/index.ts';

export const SHADOW_MANIFEST = 'sample_manifest.json';

function find(paths: readonly string[], test: (name: string) => boolean, what: string): string {
  const hits = paths.filter((p) => test(basename(p)));
  if (hits.length !== 1)
    throw new Error(
      `the shadow inputs must hold exactly one ${what}; they hold ${hits.length} (${paths.map((p) => basename(p)).join(', ') || 'none'})`,
    );
  return hits[0]!;
}

/** The held-aside source ids and content keys (lib/data/question-key.ts) listed in the shadow set's manifest. */
export async function readShadowSourceIds(
  paths: readonly string[],
): Promise<{ path: string; ids: Set<string>; contentKeys: Set<string> }> {
  const path = find(paths, (n) => n === SHADOW_MANIFEST, SHADOW_MANIFEST);
  const manifest = JSON.parse(await readFile(path, 'utf8')) as { source_ids?: unknown; content_keys?: unknown };
  const strings = (v: unknown, field: string): string[] => {
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string'))
      throw new Error(`${path}: ${field}: expected an array of strings`);
    return v;
  };
  return {
    path,
    ids: new Set(strings(manifest.source_ids, 'source_ids')),
    contentKeys: new Set(strings(manifest.content_keys ?? [], 'content_keys')),
  };
}

/** The shadow scenarios (the .jsonl among the shadow inputs). */
export async function readShadowScenarios(paths: readonly string[]): Promise<{ path: string; scenarios: Scenario[] }> {
  const path = find(paths, (n) => n.endsWith('.jsonl'), 'scenarios file (.jsonl)');
  const text = await readFile(path, 'utf8');
  const scenarios = text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Scenario);
  return { path, scenarios };
}
