// Loads configs/*.yaml into one frozen object: files merged in order (later keys win, objects
// merged deeply). Parsed results are cached by the files' hashes, so a no-op never loads the
// YAML parser. Also maps a dotted key back to its file and line for diagnostics.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { StatCache } from '../hash/stat-cache.ts';
import { writeFileAtomic } from '../util/fs.ts';
import { UsageError } from './usage-error.ts';

export type ConfigValue = null | boolean | number | string | ConfigValue[] | { [k: string]: ConfigValue };
export type ConfigObject = { [k: string]: ConfigValue };

export interface LoadedConfig {
  files: string[];
  /** file:sha256 of every config file read: what the parsed values are a function of. */
  key: string[];
  values: ConfigObject;
  /** Which file last set each top-level-or-nested key (dotted). */
  origin: Record<string, string>;
}

function isObj(v: unknown): v is ConfigObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function mergeInto(
  target: ConfigObject,
  src: ConfigObject,
  file: string,
  origin: Record<string, string>,
  prefix: string,
  strict: boolean,
): void {
  for (const [k, v] of Object.entries(src)) {
    const key = prefix ? `${prefix}.${k}` : k;
    const cur = target[k];
    if (isObj(cur) && isObj(v)) mergeInto(cur, v, file, origin, key, strict);
    else {
      if (strict && k in target) {
        const first =
          Object.entries(origin).find(([o]) => o === key || key.startsWith(o + '.') || o.startsWith(key + '.'))?.[1] ??
          '?';
        throw new UsageError({
          headline: `config key ${key} is set in both ${first} and ${file}`,
          location: file,
          hint: 'set each key in one configs/*.yaml file; profile overlays (configs/profiles/) may override',
        });
      }
      target[k] = structuredClone(v);
      origin[key] = file;
    }
  }
}

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

export async function loadConfigs(
  root: string,
  files: { base: string[]; overlay: string },
  stat: StatCache,
  cacheFile: string,
): Promise<LoadedConfig> {
  const present = [...files.base, files.overlay].filter((f) => stat.hash(f) !== null);
  const hashes = present.map((f) => `${f}:${stat.hash(f)!.sha256}`);
  try {
    const c = JSON.parse(fs.readFileSync(cacheFile, 'utf8')) as { key: string[]; config: LoadedConfig };
    if (JSON.stringify(c.key) === JSON.stringify(hashes)) return deepFreeze({ ...c.config, key: hashes });
  } catch {
    // not cached yet
  }
  const values: ConfigObject = {};
  if (present.length === 0) {
    // no config file: no YAML parser to load (~40 ms), an empty config
    const config: LoadedConfig = { files: present, key: hashes, values, origin: {} };
    writeFileAtomic(cacheFile, JSON.stringify({ key: hashes, config }));
    return deepFreeze(config);
  }
  const { parseYamlFile } = await import('./parse-yaml.ts');
  const origin: Record<string, string> = {};
  for (const f of present) {
    const text = fs.readFileSync(path.resolve(root, f), 'utf8');
    const parsed = parseYamlFile(f, text);
    if (!parsed.ok) throw new UsageError(parsed.diagnostic);
    const data = parsed.value;
    if (data === null || data === undefined) continue;
    if (!isObj(data)) {
      throw new UsageError({ headline: `${f} must hold a mapping of keys at the top level`, location: `${f}:1:1` });
    }
    mergeInto(values, data, f, origin, '', f !== files.overlay);
  }
  const config: LoadedConfig = { files: present, key: hashes, values, origin };
  writeFileAtomic(cacheFile, JSON.stringify({ key: hashes, config }));
  return deepFreeze(config);
}

const MISSING = Symbol('missing');

/** The value at a dotted key, or MISSING. */
export function getKey(values: ConfigObject, key: string): ConfigValue | typeof MISSING {
  let cur: ConfigValue = values;
  for (const part of key.split('.')) {
    if (!isObj(cur) || !(part in cur)) return MISSING;
    cur = cur[part]!;
  }
  return cur;
}

export function hasKey(values: ConfigObject, key: string): boolean {
  return getKey(values, key) !== MISSING;
}

/** The declared keys, nested as in the YAML: ['a.b', 'c'] → { a: { b: … }, c: … }. */
export function pickParams(values: ConfigObject, keys: readonly string[]): ConfigObject {
  const out: ConfigObject = {};
  for (const key of keys) {
    const v = getKey(values, key);
    if (v === MISSING) continue;
    const parts = key.split('.');
    let cur = out;
    for (const p of parts.slice(0, -1)) {
      if (!isObj(cur[p])) cur[p] = {};
      cur = cur[p] as ConfigObject;
    }
    cur[parts[parts.length - 1]!] = v;
  }
  return out;
}

/**
 * File and line where a dotted key is written: of its value (for diagnostics about the value), or
 * with `at: 'key'` of the key itself (for diagnostics about the key).
 */
export async function locateKey(
  root: string,
  files: string[],
  key: string,
  at: 'value' | 'key' = 'value',
): Promise<string | undefined> {
  const YAML = await import('yaml');
  const parts = key.split('.');
  for (const f of [...files].reverse()) {
    let text: string;
    try {
      text = fs.readFileSync(path.resolve(root, f), 'utf8');
    } catch {
      continue;
    }
    const lc = new YAML.LineCounter();
    const doc = YAML.parseDocument(text, { lineCounter: lc });
    let node = doc.getIn(parts, true) as { range?: [number, number, number] } | undefined;
    if (node && at === 'key') {
      const parent = parts.length > 1 ? doc.getIn(parts.slice(0, -1), true) : doc.contents;
      const pair = YAML.isMap(parent)
        ? parent.items.find((p) => YAML.isScalar(p.key) && String(p.key.value) === parts[parts.length - 1])
        : undefined;
      if (pair && YAML.isScalar(pair.key)) node = pair.key as { range?: [number, number, number] };
    }
    if (node?.range) {
      const pos = lc.linePos(node.range[0]);
      return `${f}:${pos.line}:${pos.col}`;
    }
  }
  return undefined;
}
