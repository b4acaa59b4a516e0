// Maps a call site captured in a compiled module (.rc1/compiled/*.mjs, with a linked source map)
// back to the TypeScript line the user wrote. Done only when a diagnostic is printed, so the
// no-op path never parses a source map.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SourceMap } from 'node:module';
import type { CallSite } from '../api/index.ts';

const cache = new Map<string, SourceMap | null>();

function mapFor(file: string): SourceMap | null {
  if (cache.has(file)) return cache.get(file)!;
  let sm: SourceMap | null = null;
  try {
    const text = fs.readFileSync(file, 'utf8');
    const m = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(text);
    if (m) sm = new SourceMap(JSON.parse(fs.readFileSync(path.resolve(path.dirname(file), m[1]!), 'utf8')));
  } catch {
    sm = null;
  }
  cache.set(file, sm);
  return sm;
}

export function originalSite(site: CallSite): CallSite {
  if (!site.file.endsWith('.mjs')) return site;
  const sm = mapFor(site.file);
  if (!sm) return site;
  const e = sm.findEntry(site.line - 1, site.col - 1) as {
    originalSource?: string;
    originalLine?: number;
    originalColumn?: number;
  };
  if (!e || e.originalSource === undefined || e.originalLine === undefined) return site;
  const src = e.originalSource.startsWith('file://')
    ? new URL(e.originalSource).pathname
    : path.resolve(path.dirname(site.file), e.originalSource);
  return { file: src, line: e.originalLine + 1, col: (e.originalColumn ?? 0) + 1 };
}
