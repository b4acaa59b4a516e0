// Which config keys the pipeline reads, so that a key nobody reads (a typo such as `shadwo:`, or a
// setting left over from an old version) is a usage error instead of being ignored silently. A key
// is read when a target declares it in `params` (a dotted key covers everything under it), when
// the pipeline function reads it (recorded through a proxy while rc1.build.ts is evaluated), or
// when the pipeline declares it free-form (definePipeline({ freeFormConfig: ['notes'] }): keys
// under it may exist without being read, e.g. notes for people or settings of other tools).
// Runs only when the pipeline is resolved, i.e. when rc1.build.ts or a config file changed.
import type { ConfigObject, ConfigValue } from './load-configs.ts';
import { type Diagnostic, didYouMean } from './usage-error.ts';

function isObj(v: unknown): v is ConfigObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A copy of the config that records the dotted path of every value read through it that is not a
 * mapping (a scalar, a list, null): what the pipeline function used. (A copy, because proxies of the
 * frozen config could not hand out proxies of its frozen children.)
 */
export function recordingConfig(values: ConfigObject): { config: ConfigObject; reads: Set<string> } {
  const reads = new Set<string>();
  const wrap = (obj: ConfigObject, prefix: string): ConfigObject =>
    new Proxy(obj, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as ConfigValue | undefined;
        if (typeof prop !== 'string' || !Object.hasOwn(target, prop)) return v;
        const key = prefix ? `${prefix}.${prop}` : prop;
        if (isObj(v)) return wrap(v, key);
        reads.add(key);
        return v;
      },
    });
  return { config: wrap(structuredClone(values), ''), reads };
}

/** Whether `key` is `prefix` or lies under it. */
function under(key: string, prefix: string): boolean {
  return key === prefix || key.startsWith(prefix + '.');
}

/**
 * The keys no one reads, each at its shallowest unread level (a misspelt top-level mapping is one
 * key, not all its leaves), in file order.
 */
export function unreadKeys(values: ConfigObject, read: readonly string[]): string[] {
  const out: string[] = [];
  const isRead = (key: string): boolean => read.some((r) => under(key, r));
  const leadsToRead = (key: string): boolean => read.some((r) => r.startsWith(key + '.'));
  const walk = (obj: ConfigObject, prefix: string): void => {
    for (const [k, v] of Object.entries(obj)) {
      const key = prefix ? `${prefix}.${k}` : k;
      if (isRead(key)) continue;
      if (isObj(v) && leadsToRead(key)) walk(v, key);
      else out.push(key);
    }
  };
  walk(values, '');
  return out;
}

/** The keys known at one level under `parent` (from what is read), for "did you mean". */
function knownSiblings(parent: string, read: readonly string[]): string[] {
  const depth = parent ? parent.split('.').length : 0;
  const out = new Set<string>();
  for (const r of read) {
    const parts = r.split('.');
    if (parts.length > depth && (depth === 0 || parts.slice(0, depth).join('.') === parent)) out.add(parts[depth]!);
  }
  return [...out];
}

/** One diagnostic per unread key, at its YAML line. */
export async function unreadKeyDiagnostics(
  values: ConfigObject,
  read: readonly string[],
  locate: (key: string) => Promise<string | undefined>,
  files: readonly string[],
): Promise<Diagnostic[]> {
  const diags: Diagnostic[] = [];
  for (const key of unreadKeys(values, read)) {
    const parts = key.split('.');
    const last = parts.pop()!;
    const guess = didYouMean(
      last,
      knownSiblings(parts.join('.'), read).filter((s) => s !== last),
    );
    const full = guess ? [...parts, guess].join('.') : undefined;
    diags.push({
      headline: `config key ${key} is read by no target`,
      location: (await locate(key)) ?? (files.join(', ') || 'configs/'),
      hint: `${full ? `did you mean ${full}? ` : ''}A key must be in some target's params or read by rc1.build.ts; declare keys meant for people or other tools in definePipeline({ freeFormConfig: ['${key}'] })`,
    });
  }
  return diags;
}
