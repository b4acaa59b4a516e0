// A quick check of a pipeline declaration that answers "certainly valid" or "don't know", for
// the validation in load-pipeline.ts: loading zod costs ~60 ms and its parse of 1 000 targets
// another ~60 ms, on every build whose declaration changed (every build from a clean .rc1/).
// When this check accepts, the zod schema (pipeline-schema.ts) would accept too: it checks the
// same rules, field by field, and answers false for anything it does not model exactly (a field
// it does not know, an object with a prototype, symbol keys, an executor object, a remote cache,
// …). Anything it does not accept is validated by zod as before, so every error message is
// zod's. test/unit/pipeline-fast-check.test.ts holds it against the schema on many declarations.
//
// One exception to "exactly": `site` as an accessor. define* attach it as a non-enumerable getter
// that formats a stack trace when read (api/index.ts withSite), and always yields a well-formed
// site or undefined; zod reads it (formatting 1 000 stacks), this check does not. A `site` data
// property is checked like any other field.

type Obj = Record<string, unknown>;

const NAME = /^[A-Za-z_][\w.@-]*$/;
const GROUP = /^\w+$/;
const OUTPUT_NAME = /^[A-Za-z_]\w*$/;
const DOTTED = /^[\w-]+(\.[\w-]+)*$/;
const ENV_NAME = /^[A-Za-z_]\w*$/;
const STATE_PATH = /^\.rc1\/[^]+$/;
const PROFILE = /^[A-Za-z0-9][\w-]*$/;

/** A plain object (Object.prototype or no prototype), every own key a string and enumerable. */
function plain(v: unknown, allowSiteAccessor = false): v is Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto !== Object.prototype && proto !== null) return false;
  for (const k of Reflect.ownKeys(v)) {
    if (typeof k !== 'string') return false;
    const d = Object.getOwnPropertyDescriptor(v, k)!;
    if (d.enumerable) {
      if (d.get || d.set) return false;
      continue;
    }
    // only define*'s lazy site may be non-enumerable (checked by siteOk)
    if (!(allowSiteAccessor && k === 'site')) return false;
  }
  return true;
}

/** Only these keys among the object's own enumerable keys. */
function onlyKeys(o: Obj, allowed: ReadonlySet<string>): boolean {
  for (const k in o) if (!allowed.has(k)) return false;
  return true;
}

const str = (v: unknown): v is string => typeof v === 'string';
const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v.length >= 1;
const matches = (v: unknown, re: RegExp): boolean => typeof v === 'string' && re.test(v);
const optional = (v: unknown, ok: (x: unknown) => boolean): boolean => v === undefined || ok(v);
/** An array of at least `min` items that pass `ok` (by index, as zod reads it: a hole is undefined). */
function arrayOf(v: unknown, ok: (x: unknown) => boolean, min = 0): boolean {
  if (!Array.isArray(v) || v.length < min) return false;
  for (let i = 0; i < v.length; i++) if (!ok(v[i])) return false;
  return true;
}
const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const bool = (v: unknown): boolean => typeof v === 'boolean';

/** A record: a plain object whose keys match `key` and whose values pass `ok`. */
function record(v: unknown, key: RegExp | null, ok: (x: unknown) => boolean): boolean {
  if (!plain(v)) return false;
  for (const k of Object.keys(v)) if ((key && !key.test(k)) || !ok(v[k])) return false;
  return true;
}

/** z.json(): strings, finite numbers, booleans, null, arrays and records of those. */
function json(v: unknown, depth = 0): boolean {
  if (depth > 64) return false;
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v);
  if (Array.isArray(v)) return arrayOf(v, (x) => json(x, depth + 1));
  return record(v, null, (x) => json(x, depth + 1));
}

const SITE_KEYS = new Set(['file', 'line', 'col']);
function siteValue(v: unknown): boolean {
  return plain(v) && onlyKeys(v, SITE_KEYS) && str(v.file) && finite(v.line) && finite(v.col);
}

/** `site`: absent, define*'s lazy accessor (see the header), or a well-formed data value. */
function siteOk(o: Obj): boolean {
  const d = Object.getOwnPropertyDescriptor(o, 'site');
  if (!d) return true;
  if (d.get && !d.set && !d.enumerable) return true;
  if (d.get || d.set) return false;
  return d.value === undefined || siteValue(d.value);
}

const REF_KEYS = new Set(['kind', 'name', 'output']);
function input(v: unknown): boolean {
  if (nonEmpty(v)) return true;
  return plain(v) && onlyKeys(v, REF_KEYS) && v.kind === 'target' && nonEmpty(v.name) && optional(v.output, nonEmpty);
}

const REQ_ENV = new Set(['env', 'values', 'optional', 'why']);
const REQ_URL = new Set(['url', 'why']);
const REQ_EXE = new Set(['executable', 'why']);
const REQ_CONFIG = new Set(['config', 'problem', 'why']);
function requirement(v: unknown): boolean {
  if (!plain(v) || !nonEmpty(v.why)) return false;
  if (onlyKeys(v, REQ_ENV) && matches(v.env, ENV_NAME))
    return optional(v.values, (x) => arrayOf(x, str)) && optional(v.optional, bool);
  if (onlyKeys(v, REQ_URL) && str(v.url)) return URL.canParse(v.url.trim());
  if (onlyKeys(v, REQ_EXE)) return nonEmpty(v.executable);
  if (onlyKeys(v, REQ_CONFIG)) return nonEmpty(v.config) && nonEmpty(v.problem);
  return false;
}

const STATE_KEYS = new Set(['path', 'cache']);
function stateItem(v: unknown): boolean {
  if (matches(v, STATE_PATH)) return true;
  return plain(v) && onlyKeys(v, STATE_KEYS) && matches(v.path, STATE_PATH) && optional(v.cache, bool);
}

const TARGET_KEYS = new Set([
  'name',
  'rule',
  'inputs',
  'outputs',
  'params',
  'args',
  'secrets',
  'env',
  'requires',
  'state',
  'executor',
  'report',
  'description',
  'metrics',
  'gate',
  'site',
]);

/** True only if targetSchema (pipeline-schema.ts) accepts `t`. */
export function certainlyValidTarget(t: unknown): boolean {
  if (!plain(t, true) || !onlyKeys(t, TARGET_KEYS) || !siteOk(t)) return false;
  if (!matches(t.name, NAME) || !nonEmpty(t.rule)) return false;
  if (!optional(t.inputs, (v) => record(v, GROUP, (x) => input(x) || arrayOf(x, input)))) return false;
  const o = t.outputs;
  if (Array.isArray(o) ? !arrayOf(o, nonEmpty, 1) : !(record(o, OUTPUT_NAME, nonEmpty) && Object.keys(o!).length > 0))
    return false;
  return (
    optional(t.params, (v) => arrayOf(v, (x) => matches(x, DOTTED))) &&
    optional(t.args, (v) => record(v, null, (x) => json(x))) &&
    optional(t.secrets, (v) => arrayOf(v, (x) => matches(x, ENV_NAME))) &&
    optional(t.env, (v) => arrayOf(v, (x) => matches(x, ENV_NAME))) &&
    optional(t.requires, (v) => arrayOf(v, requirement)) &&
    optional(t.state, (v) => arrayOf(v, stateItem)) &&
    // an executor object (Slurm options) is left to zod
    optional(t.executor, (v) => v === 'local' || v === 'slurm') &&
    optional(t.report, str) &&
    optional(t.description, str) &&
    optional(t.metrics, (v) => arrayOf(v, nonEmpty)) &&
    optional(t.gate, bool)
  );
}

// commands, executors, remoteCache, sync and report are left to zod: declared, they send the
// whole declaration there.
const PIPELINE_KEYS = new Set([
  'profiles',
  'defaultProfile',
  'manifestDir',
  'defaultTargets',
  'externalRoots',
  'cacheMaxSize',
  'freeFormConfig',
  'name',
  'historyKeep',
  'targets',
  'site',
]);

/** True only if pipelineSchema accepts `p` without its targets (those are checked one by one). */
export function certainlyValidPipeline(p: unknown): boolean {
  if (!plain(p, true) || !onlyKeys(p, PIPELINE_KEYS) || !siteOk(p)) return false;
  return (
    optional(p.profiles, (v) => arrayOf(v, (x) => matches(x, PROFILE), 1)) &&
    optional(p.defaultProfile, (v) => matches(v, PROFILE)) &&
    optional(p.manifestDir, str) &&
    optional(p.defaultTargets, (v) => arrayOf(v, str)) &&
    optional(p.externalRoots, (v) => arrayOf(v, nonEmpty)) &&
    optional(p.cacheMaxSize, (v) => str(v) || finite(v)) &&
    optional(p.freeFormConfig, (v) => arrayOf(v, (x) => matches(x, DOTTED))) &&
    optional(p.name, nonEmpty) &&
    optional(p.historyKeep, (v) => Number.isSafeInteger(v) && (v as number) >= 2) &&
    Array.isArray(p.targets)
  );
}

/** The whole declaration: the pipeline's fields and every target. */
export function certainlyValidDeclaration(p: unknown): boolean {
  if (!certainlyValidPipeline(p)) return false;
  const targets = (p as { targets: unknown[] }).targets;
  for (let i = 0; i < targets.length; i++) if (!certainlyValidTarget(targets[i])) return false;
  return true;
}
