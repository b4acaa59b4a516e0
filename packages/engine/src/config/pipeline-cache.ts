// A cache of the resolved pipeline. rc1.build.ts is a function of its code closure, the config
// and the profile (it must not read other files or the environment: it gets the profile and the
// config as arguments). So when none of those changed, the validated, resolved pipeline is read
// back from JSON instead of importing and evaluating the module again: for a 1 000-target
// pipeline that is the difference between ~3 ms and ~30 ms on every no-op. The engine's own
// code is part of the key, so a new engine always re-resolves.
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ResolvedPipeline, ResolvedTarget } from '../graph/resolved.ts';
import type { StatCache } from '../hash/stat-cache.ts';
import { sha256Hex } from '../hash/hash-file.ts';
import { writeFileAtomic } from '../util/fs.ts';
import { deepFreeze, readParsed } from '../state/parsed-state.ts';

const RESOLVED_FORMAT = 1;

type Stored = Omit<ResolvedPipeline, 'targets' | 'producers' | 'root'> & {
  targets: ResolvedTarget[];
  producers: [string, string][];
};

/** The cache key: closure of rc1.build.ts, config file hashes, profile, and this engine's code. */
export function pipelineCacheKey(
  stat: StatCache,
  closure: Record<string, string>,
  configKey: string[],
  profile: string,
): string {
  const self = fileURLToPath(import.meta.url);
  const engine = stat.hash(self)?.sha256 ?? 'unknown';
  return sha256Hex(JSON.stringify({ f: RESOLVED_FORMAT, closure, configKey, profile, engine }));
}

export function readCachedPipeline(file: string, key: string, root: string): ResolvedPipeline | null {
  let doc: { key: string; pipeline: Stored } | null;
  try {
    doc = readParsed(file, (text) => JSON.parse(text) as { key: string; pipeline: Stored }, deepFreeze);
  } catch {
    return null;
  }
  if (doc === null || doc.key !== key) return null;
  const p = doc.pipeline;
  return Object.freeze({
    ...p,
    root,
    targets: new Map(p.targets.map((t) => [t.name, Object.freeze(t)])),
    producers: new Map(p.producers),
  });
}

export function writeCachedPipeline(file: string, key: string, p: ResolvedPipeline): void {
  const { root: _root, ...rest } = p;
  const stored: Stored = { ...rest, targets: [...p.targets.values()], producers: [...p.producers] };
  writeFileAtomic(path.resolve(file), JSON.stringify({ key, pipeline: stored }));
}
