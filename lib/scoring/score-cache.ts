// The persistent score cache (SQLite through better-sqlite3 12): one row per paid-for judge sample,
// keyed by provider, model, rubric version, prompt version, item content hash and sample index.
// A lookup with another rubric or prompt version misses by construction; rows older than the TTL
// (14 days by default) are misses too, and stay until purged. Failed samples and unstable items
// have their own tables, for `scorecache replay-bad`.
//
// Durability: WAL journal, and each put is its own transaction, committed before put() returns,
// so a build killed mid-scoring keeps every sample it was answered for. synchronous=NORMAL is the
// default: in WAL mode a commit survives the process being killed (the WAL write has reached the
// OS); only a power loss or OS crash can roll back the last commits, costing a few re-billed
// calls, never a corrupt file. synchronous=FULL (config) adds an fsync per put for that case too.
// Opened per thread: it works inside the engine's rule worker threads.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type Database from 'better-sqlite3';
import type { DimScores, Provenance, ScoreRequest, ScoreSample } from './types.ts';
import { type InvalidateFilter, compareVersions, filterSql } from './cache-filter.ts';
import type { CacheKeyFields } from './score-items.ts';

/** What identifies one paid-for sample: the scoring driver's cache key fields (score-items.ts). */
export type ScoreCacheKey = CacheKeyFields;
/** An item's identity, all samples together (unstable items). */
export type ScoreItemKey = Omit<ScoreCacheKey, 'sampleIndex'>;

export function cacheKeyFor(
  p: Pick<Provenance, 'provider' | 'model'>,
  req: Pick<ScoreRequest, 'rubricVersion' | 'promptVersion' | 'itemHash' | 'sampleIndex'>,
): ScoreCacheKey {
  return {
    provider: p.provider,
    model: p.model,
    rubricVersion: req.rubricVersion,
    promptVersion: req.promptVersion,
    itemHash: req.itemHash,
    sampleIndex: req.sampleIndex,
  };
}

export interface ScoreCacheOptions {
  /** Absolute path of the SQLite file (directories are made). */
  path: string;
  ttlDays: number;
  synchronous: 'normal' | 'full';
  /** Milliseconds since the epoch; injectable for TTL tests. */
  now?: () => number;
}

export interface FailureRecord extends ScoreCacheKey {
  error: string;
  attempts: number;
  retryable: boolean;
  createdAt: number;
}
export interface UnstableRecord extends ScoreItemKey {
  variance: number;
  createdAt: number;
}
export interface LookupCounters {
  hits: number;
  misses: number;
  expired: number;
}
export interface RemovedCounts {
  scores: number;
  failures: number;
  unstable: number;
}
export interface ReplayCounts {
  unstableItems: number;
  samplesSetAside: number;
  failuresCleared: number;
}

/** Bump when the tables change; an older file is refused with a message, never silently dropped (it holds paid scores). */
export const SCORE_CACHE_FORMAT = 1;
const KEY = 'provider, model, rubric_version, prompt_version, item_hash';
const KEY_WHERE = 'provider = ? AND model = ? AND rubric_version = ? AND prompt_version = ? AND item_hash = ?';
const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS scores (provider TEXT NOT NULL, model TEXT NOT NULL, rubric_version TEXT NOT NULL, prompt_version TEXT NOT NULL,
  item_hash TEXT NOT NULL, sample_index INTEGER NOT NULL, scores TEXT NOT NULL, live INTEGER NOT NULL, billable INTEGER NOT NULL,
  latency_ms REAL NOT NULL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, created_at INTEGER NOT NULL,
  PRIMARY KEY (${KEY}, sample_index)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS failures (provider TEXT NOT NULL, model TEXT NOT NULL, rubric_version TEXT NOT NULL, prompt_version TEXT NOT NULL,
  item_hash TEXT NOT NULL, sample_index INTEGER NOT NULL, error TEXT NOT NULL, attempts INTEGER NOT NULL, retryable INTEGER NOT NULL,
  created_at INTEGER NOT NULL, PRIMARY KEY (${KEY}, sample_index)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS unstable (provider TEXT NOT NULL, model TEXT NOT NULL, rubric_version TEXT NOT NULL, prompt_version TEXT NOT NULL,
  item_hash TEXT NOT NULL, variance REAL NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (${KEY})) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS set_aside (provider TEXT NOT NULL, model TEXT NOT NULL, rubric_version TEXT NOT NULL, prompt_version TEXT NOT NULL,
  item_hash TEXT NOT NULL, sample_index INTEGER NOT NULL, scores TEXT NOT NULL, created_at INTEGER NOT NULL, set_aside_at INTEGER NOT NULL, reason TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS lookups (provider TEXT NOT NULL, model TEXT NOT NULL, rubric_version TEXT NOT NULL, prompt_version TEXT NOT NULL,
  hits INTEGER NOT NULL, misses INTEGER NOT NULL, expired INTEGER NOT NULL, PRIMARY KEY (provider, model, rubric_version, prompt_version)) WITHOUT ROWID;
`;

interface KeyRow {
  provider: string;
  model: string;
  rubric_version: string;
  prompt_version: string;
  item_hash: string;
}
interface FailureRow extends KeyRow {
  sample_index: number;
  error: string;
  attempts: number;
  retryable: number;
  created_at: number;
}
interface UnstableRow extends KeyRow {
  variance: number;
  created_at: number;
}
interface ScoreRow {
  scores: string;
  live: number;
  billable: number;
  latency_ms: number;
  prompt_tokens: number;
  completion_tokens: number;
  created_at: number;
}
type Stmt = Database.Statement<unknown[], unknown>;

export type OpenResult = { ok: true; cache: ScoreCache } | { ok: false; error: string };

/**
 * Opens (creating) the cache file. Async: better-sqlite3 is imported here, where it is used, so
 * importing a rule that reaches this module (to read its params schema) does not load it.
 */
export async function openScoreCache(o: ScoreCacheOptions): Promise<OpenResult> {
  let db: Database.Database;
  try {
    fs.mkdirSync(path.dirname(o.path), { recursive: true });
    const { default: Sqlite } = await import('better-sqlite3');
    db = new Sqlite(o.path);
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${o.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    db.pragma('busy_timeout = 10000');
    db.exec(SCHEMA);
  } catch (e) {
    return { ok: false, error: `cannot open the score cache ${o.path}: ${e instanceof Error ? e.message : String(e)}` };
  }
  const format = (db.prepare("SELECT value FROM meta WHERE key = 'format'").get() as { value: string } | undefined)
    ?.value;
  if (format === undefined)
    db.prepare("INSERT INTO meta (key, value) VALUES ('format', ?)").run(String(SCORE_CACHE_FORMAT));
  else if (format !== String(SCORE_CACHE_FORMAT)) {
    db.close();
    return {
      ok: false,
      error: `score cache ${o.path} has format v${format}, this rc1-build reads v${SCORE_CACHE_FORMAT}; it holds paid scores, so it is left as it is: move it aside to start a new cache`,
    };
  }
  return { ok: true, cache: new ScoreCache(db, o) };
}

/** Flush lookup counters to the file every this many lookups (and on close). */
const FLUSH_EVERY = 2000;

export class ScoreCache {
  readonly path: string;
  readonly ttlMs: number;
  private readonly now: () => number;
  private readonly sGet: Stmt;
  private readonly sPut: Stmt;
  private readonly sDelFailure: Stmt;
  private readonly sFailure: Stmt;
  private readonly sGetFailure: Stmt;
  private readonly sUnstable: Stmt;
  private readonly sCount: Stmt;
  private readonly putTx: (key: ScoreCacheKey, s: ScoreSample, now: number) => void;
  private pending = new Map<string, LookupCounters>();
  private pendingCount = 0;
  private readonly session: LookupCounters = { hits: 0, misses: 0, expired: 0 };

  constructor(
    private readonly db: Database.Database,
    o: ScoreCacheOptions,
  ) {
    this.path = o.path;
    this.ttlMs = o.ttlDays * 86_400_000;
    this.now = o.now ?? Date.now;
    db.function('vcmp', { deterministic: true }, (a: unknown, b: unknown) => compareVersions(String(a), String(b)));
    this.sGet = db.prepare(
      `SELECT scores, live, billable, latency_ms, prompt_tokens, completion_tokens, created_at FROM scores WHERE ${KEY_WHERE} AND sample_index = ?`,
    );
    this.sPut =
      db.prepare(`INSERT INTO scores VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET scores = excluded.scores,
      live = excluded.live, billable = excluded.billable, latency_ms = excluded.latency_ms, prompt_tokens = excluded.prompt_tokens,
      completion_tokens = excluded.completion_tokens, created_at = excluded.created_at`);
    this.sDelFailure = db.prepare(`DELETE FROM failures WHERE ${KEY_WHERE} AND sample_index = ?`);
    this.sFailure = db.prepare('INSERT OR REPLACE INTO failures VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
    this.sGetFailure = db.prepare(
      `SELECT error, attempts, retryable, created_at FROM failures WHERE ${KEY_WHERE} AND sample_index = ?`,
    );
    this.sUnstable = db.prepare('INSERT OR REPLACE INTO unstable VALUES (?, ?, ?, ?, ?, ?, ?)');
    this.sCount =
      db.prepare(`INSERT INTO lookups VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET hits = hits + excluded.hits,
      misses = misses + excluded.misses, expired = expired + excluded.expired`);
    this.putTx = db.transaction((k: ScoreCacheKey, s: ScoreSample, now: number) => {
      this.sPut.run(
        k.provider,
        k.model,
        k.rubricVersion,
        k.promptVersion,
        k.itemHash,
        k.sampleIndex,
        JSON.stringify(s.scores),
        s.live ? 1 : 0,
        s.billable ? 1 : 0,
        s.latencyMs,
        s.promptTokens,
        s.completionTokens,
        now,
      );
      this.sDelFailure.run(k.provider, k.model, k.rubricVersion, k.promptVersion, k.itemHash, k.sampleIndex);
    });
  }

  /** The stored sample (cached: true), or undefined on a miss; a row older than the TTL is a miss. */
  get(k: ScoreCacheKey): ScoreSample | undefined {
    const row = this.sGet.get(k.provider, k.model, k.rubricVersion, k.promptVersion, k.itemHash, k.sampleIndex) as
      | ScoreRow
      | undefined;
    const expired = row !== undefined && row.created_at < this.now() - this.ttlMs;
    this.count(k, row === undefined || expired ? (expired ? 'expired' : 'misses') : 'hits');
    if (row === undefined || expired) return undefined;
    return {
      provider: k.provider,
      model: k.model,
      live: row.live === 1,
      billable: row.billable === 1,
      scores: JSON.parse(row.scores) as DimScores,
      latencyMs: row.latency_ms,
      promptTokens: row.prompt_tokens,
      completionTokens: row.completion_tokens,
      cached: true,
    };
  }

  /** Store a sample, committed before returning; clears a failure recorded for the same key. */
  put(k: ScoreCacheKey, s: ScoreSample): void {
    this.putTx(k, s, this.now());
  }

  /** Record a sample that could not be scored (its error is already free of secrets). */
  recordFailure(k: ScoreCacheKey, f: { error: string; attempts: number; retryable: boolean }): void {
    this.sFailure.run(
      k.provider,
      k.model,
      k.rubricVersion,
      k.promptVersion,
      k.itemHash,
      k.sampleIndex,
      f.error,
      f.attempts,
      f.retryable ? 1 : 0,
      this.now(),
    );
  }

  /** The failure recorded for a sample, if any (a driver may skip non-retryable ones until replay-bad). */
  failure(k: ScoreCacheKey): FailureRecord | undefined {
    const r = this.sGetFailure.get(k.provider, k.model, k.rubricVersion, k.promptVersion, k.itemHash, k.sampleIndex) as
      | { error: string; attempts: number; retryable: number; created_at: number }
      | undefined;
    return r && { ...k, error: r.error, attempts: r.attempts, retryable: r.retryable === 1, createdAt: r.created_at };
  }

  /** Mark an item unstable (its K samples vary too much); `replay-bad` re-scores it. */
  markUnstable(k: ScoreItemKey, variance: number): void {
    this.sUnstable.run(k.provider, k.model, k.rubricVersion, k.promptVersion, k.itemHash, variance, this.now());
  }

  clearUnstable(k: ScoreItemKey): void {
    this.db
      .prepare(`DELETE FROM unstable WHERE ${KEY_WHERE}`)
      .run(k.provider, k.model, k.rubricVersion, k.promptVersion, k.itemHash);
  }

  failures(): FailureRecord[] {
    return (this.db.prepare('SELECT * FROM failures ORDER BY created_at').all() as FailureRow[]).map((r) => ({
      ...rowKey(r),
      sampleIndex: r.sample_index,
      error: r.error,
      attempts: r.attempts,
      retryable: r.retryable === 1,
      createdAt: r.created_at,
    }));
  }

  unstable(): UnstableRecord[] {
    return (this.db.prepare('SELECT * FROM unstable ORDER BY created_at').all() as UnstableRow[]).map((r) => ({
      ...rowKey(r),
      variance: r.variance,
      createdAt: r.created_at,
    }));
  }

  /** Lookups made through this object so far. */
  counters(): LookupCounters {
    return { ...this.session };
  }

  /**
   * Remove the rows a filter selects, from all three tables (age applies to when a row was written).
   * With dryRun, count only.
   */
  invalidate(f: InvalidateFilter, dryRun = false): RemovedCounts {
    const run = (table: string): number => {
      const { where, args } = filterSql(f, this.now(), this.ttlMs);
      const sql = dryRun ? `SELECT COUNT(*) AS n FROM ${table} WHERE ${where}` : `DELETE FROM ${table} WHERE ${where}`;
      return dryRun
        ? (this.db.prepare(sql).get(...args) as { n: number }).n
        : this.db.prepare(sql).run(...args).changes;
    };
    return this.db.transaction(() => ({
      scores: run('scores'),
      failures: run('failures'),
      unstable: run('unstable'),
    }))();
  }

  /**
   * Prepare a re-score of the bad items: every unstable item's samples move to `set_aside` (kept,
   * never served again) and its mark is cleared; every recorded failure is cleared. The next
   * scoring run then misses on exactly those samples and asks the provider again.
   */
  replayBad(): ReplayCounts {
    const now = this.now();
    return this.db.transaction((): ReplayCounts => {
      const moved = this.db
        .prepare(`INSERT INTO set_aside SELECT s.provider, s.model, s.rubric_version, s.prompt_version, s.item_hash, s.sample_index,
        s.scores, s.created_at, ?, 'unstable' FROM scores s JOIN unstable u USING (${KEY})`)
        .run(now).changes;
      this.db.prepare(`DELETE FROM scores WHERE (${KEY}) IN (SELECT ${KEY} FROM unstable)`).run();
      const items = this.db.prepare('DELETE FROM unstable').run().changes;
      const failures = this.db.prepare('DELETE FROM failures').run().changes;
      return { unstableItems: items, samplesSetAside: moved, failuresCleared: failures };
    })();
  }

  /** The underlying handle, for stat queries (cache-cli.ts). */
  get handle(): Database.Database {
    return this.db;
  }

  private count(k: ScoreCacheKey, field: keyof LookupCounters): void {
    this.session[field]++;
    const g = `${k.provider}\0${k.model}\0${k.rubricVersion}\0${k.promptVersion}`;
    let c = this.pending.get(g);
    if (!c) this.pending.set(g, (c = { hits: 0, misses: 0, expired: 0 }));
    c[field]++;
    if (++this.pendingCount >= FLUSH_EVERY) this.flush();
  }

  /** Write the pending lookup counters (done every few thousand lookups and on close). */
  flush(): void {
    if (this.pendingCount === 0) return;
    const entries = [...this.pending];
    this.pending = new Map();
    this.pendingCount = 0;
    this.db.transaction(() => {
      for (const [g, c] of entries) this.sCount.run(...g.split('\0'), c.hits, c.misses, c.expired);
    })();
  }

  close(): void {
    if (!this.db.open) return;
    this.flush();
    this.db.close();
  }
}

function rowKey(r: KeyRow): ScoreItemKey {
  return {
    provider: r.provider,
    model: r.model,
    rubricVersion: r.rubric_version,
    promptVersion: r.prompt_version,
    itemHash: r.item_hash,
  };
}
