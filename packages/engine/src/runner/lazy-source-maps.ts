// Source-mapped stack traces in a rule worker without Node's source map support switched on.
// `process.setSourceMapsEnabled(true)` makes Node read and parse the source map of every module
// it loads (the rule's bundle, each npm package shipping a map: the Qwen3 tokenizer's is 494 KiB)
// and scan every module's text, at load, whether or not a stack is ever formatted. Instead the
// worker installs this Error.prepareStackTrace: a file's map is read only when a stack with one of
// its frames is formatted, then kept for the worker's life. The text is Node's own
// (prepareStackTraceWithSourceMaps of lib/internal/source_map/prepare_stack_trace.js, Node 20):
// the same frames, names and paths as with source maps on (test/unit/lazy-source-maps.test.ts
// compares the two). Where Node's support is on anyway (tsx, --enable-source-maps), its own maps
// are used first. Not covered: code run by eval() with its own //# sourceURL (Node maps it only
// when its support is on at that eval; no rule does this).
import * as fs from 'node:fs';
import { SourceMap, findSourceMap } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const kStackLineAt = '\n    at ';
const kSourceMappingURLMagicComment = /\/[*/]#\s+sourceMappingURL=(?<sourceMappingURL>[^\s]+)/g;

/** Node's internal marker of its own errors (`TypeError [ERR_X]: …`), found on one of them. */
const kIsNodeError: symbol | undefined = (() => {
  try {
    Buffer.alloc(-1);
  } catch (e) {
    for (let o: object | null = e as object; o; o = Object.getPrototypeOf(o) as object | null) {
      const s = Object.getOwnPropertySymbols(o).find((x) => x.description === 'kIsNodeError');
      if (s) return s;
    }
  }
  return undefined;
})();

interface CallSiteLike {
  getFileName(): string | undefined | null;
  getEvalOrigin(): string | undefined;
  getLineNumber(): number | null;
  getColumnNumber(): number | null;
  getEnclosingLineNumber(): number | null;
  getEnclosingColumnNumber(): number | null;
  getFunctionName(): string | null;
  getMethodName(): string | null;
  getTypeName(): string | null;
  isAsync(): boolean;
  isConstructor(): boolean;
  toString(): string;
}

const maps = new Map<string, SourceMap | null>();
const excluded = new Set<string>();

/** `sources` made absolute URLs and `sourceRoot` emptied, as Node's sourcesToAbsolute does. */
function sourcesToAbsolute(base: string, data: { sources: string[]; sourceRoot?: string }): object {
  data.sources = data.sources.map((s) => {
    const source = (data.sourceRoot || '') + s;
    return source.startsWith('/') ? pathToFileURL(source).href : new URL(source, base).href;
  });
  data.sourceRoot = '';
  return data;
}

/** The map Node would have cached for this module (same lookup, same parse), read now. */
function readMap(url: string): SourceMap | null {
  let content: string;
  try {
    content = fs.readFileSync(fileURLToPath(url), 'utf8');
  } catch {
    return null;
  }
  let last: RegExpExecArray | null = null;
  for (let m: RegExpExecArray | null; (m = kSourceMappingURLMagicComment.exec(content)); ) last = m;
  const mapUrl = last?.groups?.sourceMappingURL;
  if (mapUrl === undefined) return null;
  try {
    let data: { sources: string[]; sourceRoot?: string };
    let base: string;
    const abs = URL.canParse(mapUrl) ? new URL(mapUrl) : null;
    if (abs) {
      if (abs.protocol !== 'data:') return null;
      const [format = '', body = ''] = abs.pathname.split(',');
      const parts = format.split(';');
      if (parts[0] !== 'application/json') return null;
      data = JSON.parse(parts[parts.length - 1] === 'base64' ? Buffer.from(body, 'base64').toString('utf8') : body);
      base = url;
    } else {
      base = new URL(mapUrl, url).href;
      data = JSON.parse(fs.readFileSync(fileURLToPath(base), 'utf8'));
    }
    return new SourceMap(sourcesToAbsolute(base, data) as ConstructorParameters<typeof SourceMap>[0]);
  } catch {
    return null;
  }
}

function mapFor(fileName: string | undefined | null): SourceMap | undefined {
  if (typeof fileName !== 'string') return undefined;
  const own = findSourceMap(fileName);
  if (own) return own;
  // A module's file: a file URL (ESM) or an absolute path (CommonJS); not node:internal/…, eval.
  let url: string;
  if (fileName.startsWith('file://')) url = fileName;
  else if (fileName.startsWith('/')) url = pathToFileURL(fileName).href;
  else return undefined;
  if (excluded.has(url)) return undefined;
  let sm = maps.get(url);
  if (sm === undefined) {
    sm = readMap(url);
    maps.set(url, sm);
  }
  return sm ?? undefined;
}

function originalSymbolName(sm: SourceMap, site: CallSiteLike, caller: CallSiteLike | undefined): string | undefined {
  const enclosing = sm.findEntry(site.getEnclosingLineNumber()! - 1, site.getEnclosingColumnNumber()! - 1) as {
    name?: string;
  };
  if (enclosing.name) return enclosing.name;
  if (caller && site.getFileName() === caller.getFileName()) {
    return (sm.findEntry(caller.getLineNumber()! - 1, caller.getColumnNumber()! - 1) as { name?: string }).name;
  }
  return undefined;
}

function serializeFrame(sm: SourceMap, site: CallSiteLike, caller: CallSiteLike | undefined): string {
  const { originalLine, originalColumn, originalSource } = sm.findEntry(
    site.getLineNumber()! - 1,
    site.getColumnNumber()! - 1,
  ) as { originalLine?: number; originalColumn?: number; originalSource?: string };
  if (originalSource === undefined || originalLine === undefined || originalColumn === undefined) return `${site}`;
  const name = originalSymbolName(sm, site, caller);
  const source = originalSource.startsWith('file://') ? fileURLToPath(originalSource) : originalSource;
  const fnName = site.getFunctionName() ?? site.getMethodName();
  const prefix = site.isAsync() ? 'async ' : site.isConstructor() ? 'new ' : '';
  const typeName = site.getTypeName();
  const namePrefix = typeName !== null && typeName !== 'global' ? `${typeName}.` : '';
  const originalName = `${namePrefix}${fnName || '<anonymous>'}`;
  const mappedName = name && name !== originalName ? `${name}` : `${originalName}`;
  const hasName = !!(name || originalName);
  return `${prefix}${mappedName}${hasName ? ' (' : ''}${source}:${originalLine + 1}:${originalColumn + 1}${hasName ? ')' : ''}`;
}

/** Node's prepareStackTraceWithSourceMaps, with maps read on first use. */
export function prepareStackTrace(error: Error, trace: CallSiteLike[]): string {
  const errorString =
    kIsNodeError !== undefined && typeof error === 'object' && error !== null && kIsNodeError in error
      ? `${error.name} [${(error as { code?: unknown }).code}]: ${error.message}`
      : Error.prototype.toString.call(error);
  if (trace.length === 0) return errorString;
  let lastMap: SourceMap | undefined;
  let lastFile: string | undefined | null;
  let out = errorString;
  for (let i = 0; i < trace.length; i++) {
    const site = trace[i]!;
    try {
      let fileName = site.getFileName();
      if (fileName === undefined) fileName = site.getEvalOrigin();
      const sm = fileName === lastFile ? lastMap : mapFor(fileName);
      if (sm) {
        lastMap = sm;
        lastFile = fileName;
        out += `${kStackLineAt}${serializeFrame(sm, site, trace[i + 1])}`;
        continue;
      }
    } catch {
      /* as Node: the frame unmapped */
    }
    out += `${kStackLineAt}${site}`;
  }
  return out;
}

/**
 * Format this thread's stacks through the source maps of the files in them, read when first
 * needed. `exclude`: module URLs loaded before (the worker's own module), which Node would not
 * have mapped either.
 */
export function installLazySourceMaps(exclude: string[] = []): void {
  for (const u of exclude) excluded.add(u);
  Error.prepareStackTrace = prepareStackTrace as unknown as typeof Error.prepareStackTrace;
}
