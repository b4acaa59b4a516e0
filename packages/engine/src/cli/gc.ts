// `rc1-build gc [--max-size SIZE]`, and the same cap applied after every build that changed
// something: the output cache (.rc1/cache) is kept under its cap by evicting least recently used
// entries (packages/engine/src/cache/cache-gc.ts). The cap: --max-size, else $RC1_CACHE_MAX_SIZE, else the
// pipeline's cacheMaxSize, else 10 GiB. What was removed is printed.
import {
  DEFAULT_CACHE_MAX,
  type GcResult,
  formatSize,
  gcCache,
  markUsed,
  parseSize,
  recordCurrent,
} from '../cache/cache-gc.ts';
import { UsageError } from '../config/usage-error.ts';
import { phase } from '../util/timing.ts';
import type { Workspace } from '../workspace/workspace.ts';

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
}

const cacheDir = (ws: Workspace): string => ws.cache.dir;

export function cacheCap(ws: Workspace, flag?: string, env: NodeJS.ProcessEnv = process.env): number {
  const [source, value] =
    flag !== undefined
      ? (['--max-size', flag] as const)
      : env.RC1_CACHE_MAX_SIZE
        ? (['RC1_CACHE_MAX_SIZE', env.RC1_CACHE_MAX_SIZE] as const)
        : ([null, null] as const);
  if (source === null) return ws.pipeline.cacheMaxBytes ?? DEFAULT_CACHE_MAX;
  const n = parseSize(value);
  if (n === null)
    throw new UsageError({
      headline: `${source}: expected a size such as 20G, 500M or a number of bytes, got ${JSON.stringify(value)}`,
    });
  return n;
}

/** The current key of every target with a record. */
export function currentKeys(ws: Workspace): Map<string, string> {
  return new Map([...ws.trace.records].map(([n, r]) => [n, r.key]));
}

function describe(r: GcResult, limit: number): string[] {
  const lines = r.removed
    .slice(0, limit)
    .map(
      (x) =>
        `  removed ${x.target} ${x.key.slice(0, 12)} (last used ${x.lastUse.toISOString()}, ${formatSize(x.bytes)})`,
    );
  if (r.removed.length > limit) lines.push(`  … and ${r.removed.length - limit} more entries`);
  if (r.orphanBytes) lines.push(`  removed ${formatSize(r.orphanBytes)} of objects no entry listed`);
  return lines;
}

/**
 * After a build (lock held): entries of targets whose outputs changed are marked used, the
 * profile's current entries are recorded, and the cap is applied. `changed`: each target whose
 * record the build replaced or removed, with its record before (TraceLog.changedSince). Nothing
 * to do on a no-op.
 */
export function afterBuildGc(ws: Workspace, changed: ReadonlyMap<string, { key: string } | undefined>, io: Io): void {
  const touched = new Set<string>();
  for (const [n, before] of changed) {
    const k = ws.trace.records.get(n)?.key;
    if (before?.key !== k) {
      if (k) touched.add(k);
      if (before) touched.add(before.key);
    }
  }
  if (touched.size === 0) return;
  const now = currentKeys(ws);
  markUsed(ws.cache, touched);
  phase('gc: mark used');
  recordCurrent(cacheDir(ws), ws.profile, now);
  phase('gc: record current');
  // A remote tier stores downloaded objects itself (not through storeObject): then gc walks.
  const r = gcCache(ws.cache, { maxBytes: cacheCap(ws), bounded: ws.remote === null });
  phase('gc: size cap');
  // Compiled files no record names (dry runs', deleted rules'), quietly; only after a build that
  // compiled something (an edit), so a build of changed data alone lists no folder for it.
  // Housekeeping: a failure here (a full disk saving the index) leaves them for the next time.
  if (ws.compiler.compiles > 0) {
    try {
      ws.compiler.sweep();
    } catch {
      /* the next sweep */
    }
    phase('gc: compiled files');
  }
  if (r.removed.length === 0 && r.orphanBytes === 0) return;
  io.err(
    `rc1-build: the output cache was over its cap (${formatSize(r.before)} > ${formatSize(r.maxBytes)}): freed ${formatSize(r.freedBytes)}, now ${formatSize(r.after)}\n${describe(r, 10).join('\n')}\n`,
  );
}

export function runGc(ws: Workspace, maxSize: string | undefined, json: boolean, io: Io): number {
  const maxBytes = cacheCap(ws, maxSize);
  ws.lock.acquire('rc1-build gc');
  try {
    recordCurrent(cacheDir(ws), ws.profile, currentKeys(ws));
    const r = gcCache(ws.cache, { maxBytes, full: true });
    let compiled = { files: 0, bytes: 0, records: 0 };
    try {
      compiled = ws.compiler.sweep();
    } catch (e) {
      io.err(`rc1-build: warning: could not remove unused compiled rule files: ${(e as Error).message}\n`);
    }
    if (json) {
      io.out(
        JSON.stringify({
          event: 'gc',
          before: r.before,
          after: r.after,
          freed: r.freedBytes,
          maxBytes,
          orphanBytes: r.orphanBytes,
          removed: r.removed.map((x) => ({ ...x, lastUse: x.lastUse.toISOString() })),
          compiled,
        }) + '\n',
      );
      return 0;
    }
    io.out(
      `gc: freed ${formatSize(r.freedBytes)} (${r.removed.length} entr${r.removed.length === 1 ? 'y' : 'ies'}); the cache holds ${formatSize(r.after)} of ${formatSize(maxBytes)} allowed\n`,
    );
    for (const l of describe(r, 50)) io.out(l + '\n');
    if (compiled.files > 0 || compiled.records > 0)
      io.out(
        `gc: removed ${compiled.files} compiled rule file${compiled.files === 1 ? '' : 's'} no rule uses (${formatSize(compiled.bytes)})${compiled.records > 0 ? `, and the records of ${compiled.records} module${compiled.records === 1 ? '' : 's'} whose file is gone` : ''}\n`,
      );
    return 0;
  } finally {
    ws.lock.release();
  }
}
