// `rc1-build scorecache stat | invalidate --spec SPEC | replay-bad`: look into and maintain the
// persistent score cache without running a build. packages/engine/src/cli dispatches `scorecache …` here.
//
//   stat [--json]                      entries, expired, failures, unstable items, lookups and hit
//                                      rate, per provider / model / rubric / prompt version
//   invalidate --spec SPEC [--dry-run] remove the rows SPEC selects (grammar: cache-filter.ts),
//                                      print how many were removed from each table
//   replay-bad [--dry-run]             set aside the samples of every unstable item (kept in the
//                                      file, never served again) and clear every recorded failure,
//                                      so that the next `rc1-build --force scores` asks the provider
//                                      again for exactly those samples and for nothing else
//   common: --db PATH (default: scoring_live.cache.path of the config the engine resolved for the
//           profile in force: configs/*.yaml and the profile's overlay, read by the engine's one
//           config loader, so a YAML error is the engine's usage error naming file and line)
// Exit codes: 0 ok, 1 the cache could not be opened, 64 usage error.
import * as fs from 'node:fs';
import { defineCommand, type JsonValue } from 'rc1-build';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { parseInvalidateSpec, type ParsedSpec } from './cache-filter.ts';
import { CacheSchema, scoringLiveDefaults } from './presets.ts';
import { openScoreCache, SCORE_CACHE_FORMAT, type ScoreCache } from './score-cache.ts';

/** What the command needs from the engine (a subset of its CommandContext). */
export interface CliContext {
  root: string;
  config: Readonly<Record<string, JsonValue>>;
  out(s: string): void;
  err(s: string): void;
}

const USAGE = `usage: rc1-build scorecache stat [--json]
       rc1-build scorecache invalidate --spec SPEC [--dry-run] [--json]
       rc1-build scorecache replay-bad [--dry-run] [--json]
       common: --db PATH
SPEC: clauses joined by ",", all must hold: provider=X, model=X, item=HASHPREFIX (= or !=),
      rubric<V, prompt>=V (= != < <= > >=, natural version order), older-than=7d (s m h d w),
      expired (past the TTL), all. Example: provider=openai,model=gpt-4o-mini,rubric<3,older-than=7d
`;

interface CacheSettings {
  path: string;
  ttlDays: number;
  synchronous: 'normal' | 'full';
}

/** scoring_live.cache of the resolved config over the defaults; a bad value names its key. */
function cacheSettings(
  config: Readonly<Record<string, JsonValue>>,
): { ok: true; settings: CacheSettings } | { ok: false; error: string } {
  const live = config.scoring_live;
  const given = live && typeof live === 'object' && !Array.isArray(live) ? live.cache : undefined;
  const r = CacheSchema.safeParse({
    ...scoringLiveDefaults.cache,
    ...(given && typeof given === 'object' && !Array.isArray(given) ? given : {}),
  });
  if (!r.success) {
    return {
      ok: false,
      error: r.error.issues.map((i) => `scoring_live.cache.${i.path.map(String).join('.')}: ${i.message}`).join('; '),
    };
  }
  return { ok: true, settings: { path: r.data.path, ttlDays: r.data.ttl_days, synchronous: r.data.synchronous } };
}

const pct = (x: number): string => `${(x * 100).toFixed(1)} %`;

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return (
    rows
      .map((r) =>
        r
          .map((c, i) => c.padEnd(widths[i]!))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

export interface CacheStat {
  path: string;
  format: number;
  ttl_days: number;
  entries: number;
  expired: number;
  failures: number;
  unstable_items: number;
  set_aside: number;
  lookups: { hits: number; misses: number; expired: number; hit_rate: number };
  groups: {
    provider: string;
    model: string;
    rubric_version: string;
    prompt_version: string;
    entries: number;
    expired: number;
    live: number;
    hits: number;
    misses: number;
    expired_lookups: number;
    hit_rate: number;
    newest: string | null;
  }[];
}

export function cacheStat(cache: ScoreCache, now = Date.now()): CacheStat {
  cache.flush();
  const db = cache.handle;
  const cutoff = now - cache.ttlMs;
  const groups = db
    .prepare(`SELECT provider, model, rubric_version, prompt_version, COUNT(*) AS entries, SUM(created_at < ?) AS expired,
    SUM(live) AS live, MAX(created_at) AS newest FROM scores GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`)
    .all(cutoff) as {
    provider: string;
    model: string;
    rubric_version: string;
    prompt_version: string;
    entries: number;
    expired: number;
    live: number;
    newest: number;
  }[];
  const lookups = db.prepare('SELECT * FROM lookups').all() as {
    provider: string;
    model: string;
    rubric_version: string;
    prompt_version: string;
    hits: number;
    misses: number;
    expired: number;
  }[];
  const gkey = (r: { provider: string; model: string; rubric_version: string; prompt_version: string }): string =>
    [r.provider, r.model, r.rubric_version, r.prompt_version].join('\0');
  const byKey = new Map(lookups.map((l) => [gkey(l), l]));
  const rate = (h: number, m: number, e: number): number => (h + m + e > 0 ? h / (h + m + e) : 0);
  const count = (sql: string): number => (db.prepare(sql).get() as { n: number }).n;
  const allGroups = new Map(groups.map((g) => [gkey(g), g]));
  for (const l of lookups)
    if (!allGroups.has(gkey(l))) allGroups.set(gkey(l), { ...l, entries: 0, expired: 0, live: 0, newest: 0 });
  const tot = lookups.reduce(
    (a, l) => ({ hits: a.hits + l.hits, misses: a.misses + l.misses, expired: a.expired + l.expired }),
    { hits: 0, misses: 0, expired: 0 },
  );
  return {
    path: cache.path,
    format: SCORE_CACHE_FORMAT,
    ttl_days: cache.ttlMs / 86_400_000,
    entries: groups.reduce((n, g) => n + g.entries, 0),
    expired: groups.reduce((n, g) => n + g.expired, 0),
    failures: count('SELECT COUNT(*) AS n FROM failures'),
    unstable_items: count('SELECT COUNT(*) AS n FROM unstable'),
    set_aside: count('SELECT COUNT(*) AS n FROM set_aside'),
    lookups: { ...tot, hit_rate: rate(tot.hits, tot.misses, tot.expired) },
    groups: [...allGroups.values()].map((g) => {
      const l = byKey.get(gkey(g)) ?? { hits: 0, misses: 0, expired: 0 };
      return {
        provider: g.provider,
        model: g.model,
        rubric_version: g.rubric_version,
        prompt_version: g.prompt_version,
        entries: g.entries,
        expired: g.expired,
        live: g.live,
        hits: l.hits,
        misses: l.misses,
        expired_lookups: l.expired,
        hit_rate: rate(l.hits, l.misses, l.expired),
        newest: g.newest > 0 ? new Date(g.newest).toISOString() : null,
      };
    }),
  };
}

function formatStat(s: CacheStat, shown: string): string {
  let out = `score cache ${shown} (format v${s.format}, TTL ${s.ttl_days} d)\n`;
  out += `entries ${s.entries} (expired ${s.expired}) · failed samples ${s.failures} · unstable items ${s.unstable_items} · set aside ${s.set_aside}\n`;
  const l = s.lookups;
  out += `lookups ${l.hits + l.misses + l.expired}: hits ${l.hits}, misses ${l.misses}, expired ${l.expired} · hit rate ${pct(l.hit_rate)}\n`;
  if (s.groups.length === 0) return out;
  const rows = [
    ['provider', 'model', 'rubric', 'prompt', 'entries', 'expired', 'live', 'hits', 'misses', 'hit rate', 'newest'],
  ];
  for (const g of s.groups) {
    rows.push([
      g.provider,
      g.model,
      g.rubric_version,
      g.prompt_version,
      String(g.entries),
      String(g.expired),
      String(g.live),
      String(g.hits),
      String(g.misses + g.expired_lookups),
      pct(g.hit_rate),
      g.newest ?? '-',
    ]);
  }
  return `${out}\n${table(rows)}`;
}

/** The scorecache command line (node:util parseArgs, strict). */
function parseScorecacheArgs(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      json: { type: 'boolean' },
      spec: { type: 'string' },
      'dry-run': { type: 'boolean' },
      db: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

export async function runScorecache(argv: string[], io: CliContext): Promise<number> {
  const { root } = io;
  let parsed: ReturnType<typeof parseScorecacheArgs>;
  try {
    parsed = parseScorecacheArgs(argv);
  } catch (e) {
    io.err(`rc1 scorecache: ${e instanceof Error ? e.message : String(e)}\n${USAGE}`);
    return 64;
  }
  const { values, positionals } = parsed;
  const [command, ...extra] = positionals;
  if (values.help) {
    io.out(USAGE);
    return 0;
  }
  if (!command || !['stat', 'invalidate', 'replay-bad'].includes(command) || extra.length > 0) {
    io.err(
      `rc1 scorecache: ${command ? `unknown command "${[command, ...extra].join(' ')}"` : 'missing command'}\n${USAGE}`,
    );
    return 64;
  }
  const loaded = cacheSettings(io.config);
  if (!loaded.ok) {
    io.err(`rc1 scorecache: ${loaded.error} (configs/*.yaml)\n`);
    return 64;
  }
  const settings = loaded.settings;
  const dbPath = path.resolve(root, values.db ?? settings.path);
  const shown = path.relative(root, dbPath) || dbPath;
  const json = values.json === true;
  const dry = values['dry-run'] === true;

  let spec: ParsedSpec | undefined;
  if (command === 'invalidate') {
    if (values.spec === undefined) {
      io.err(`rc1 scorecache: invalidate needs --spec SPEC\n${USAGE}`);
      return 64;
    }
    spec = parseInvalidateSpec(values.spec);
    if (!spec.ok) {
      io.err(
        `rc1 scorecache: invalid --spec: ${spec.error}\n  hint: ${spec.hint ?? 'see rc1-build scorecache --help'}\n`,
      );
      return 64;
    }
  } else if (values.spec !== undefined) {
    io.err(`rc1 scorecache: --spec applies to invalidate only\n`);
    return 64;
  }

  if (!fs.existsSync(dbPath)) {
    if (json) io.out(`${JSON.stringify({ path: shown, exists: false })}\n`);
    else io.out(`no score cache at ${shown}: nothing has been scored yet\n`);
    return 0;
  }
  const opened = await openScoreCache({ path: dbPath, ttlDays: settings.ttlDays, synchronous: settings.synchronous });
  if (!opened.ok) {
    io.err(`rc1 scorecache: ${opened.error}\n`);
    return 1;
  }
  const cache = opened.cache;
  try {
    if (command === 'stat') {
      const s = cacheStat(cache);
      io.out(json ? `${JSON.stringify({ ...s, path: shown })}\n` : formatStat(s, shown));
    } else if (command === 'invalidate' && spec?.ok) {
      const n = cache.invalidate(spec.filter, dry);
      const verb = dry ? 'would remove' : 'removed';
      if (json) io.out(`${JSON.stringify({ dry_run: dry, spec: values.spec, ...n })}\n`);
      else
        io.out(
          `invalidate ${values.spec}: ${verb} ${n.scores} cached samples, ${n.failures} failure records, ${n.unstable} unstable marks\n`,
        );
    } else {
      const before = cacheStat(cache);
      const r = dry
        ? { unstableItems: before.unstable_items, samplesSetAside: -1, failuresCleared: before.failures }
        : cache.replayBad();
      if (json)
        io.out(
          `${JSON.stringify({ dry_run: dry, unstable_items: r.unstableItems, samples_set_aside: dry ? null : r.samplesSetAside, failures_cleared: r.failuresCleared })}\n`,
        );
      else {
        io.out(
          dry
            ? `replay-bad (dry run): ${r.unstableItems} unstable items and ${r.failuresCleared} failed samples would be re-scored\n`
            : `replay-bad: ${r.unstableItems} unstable items (${r.samplesSetAside} samples set aside, kept in the file) and ${r.failuresCleared} failed samples will be re-scored\n`,
        );
        if (!dry && r.unstableItems + r.failuresCleared > 0)
          io.out(
            'next: rc1-build --force scores  (asks the provider again for exactly these samples; all others come from the cache)\n',
          );
      }
    }
  } finally {
    cache.close();
  }
  return 0;
}

/** `rc1-build scorecache …`, declared in rc1.build.ts's `commands`. */
export default defineCommand((args, ctx) => runScorecache(args, ctx));
