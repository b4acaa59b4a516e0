// pool_validation (docs/rc1.md gate): the seed pool's diversity, duplicates, source reuse, lengths,
// leaks of held-out questions and task mix. One output, the report (the engine writes it from the
// returned checks and report). Inputs: `pool` (the seed_pool output), `metrics` (its difficulty
// metrics: the length gate reads their Qwen3 len_tokens), `shadow` (shadow_set outputs: the
// manifest names the held-out items), `v1` (pack_v1 JSON: the KL baseline), `raw` (the data
// files: the held-out questions and contexts the leak check compares against, and the items the
// KL baseline re-renders with pack_v1, so the KL compares packs, not samples). Params:
// `validation` (thresholds, sampling, RC1's target mix), `pool` (clarify rate, max turns).
// Whole pool: duplicates, lengths, leaks, mix, role/style coverage. Seeded sample (batches of a
// fixed size): distinct-n, TTR, Zipf, KL, so the values mean the same at 1 000 and 30 000.
// The per-scenario part of the pass (parse, normalise, leak check: pure in the line and the
// held-out questions) runs on two threads for a pool of 2 × BYTES_PER_SCAN_THREAD or more: a
// worker (this bundle, see the `role` check at the bottom) takes the lines that start in the
// second half of the file; everything is then counted in pool order, so the report is the same.
import { statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { z } from 'zod';
import { check, defineRule, RuleError } from 'rc1-build';
import {
  dataFileFormat,
  deriveSeed,
  displayPath,
  loadSources,
  questionKey,
  scenarioContext,
  sourceKey,
  TASKS,
  type Scenario,
  type SourceItem,
} from '../lib/data/index.ts';
import { blankRange, readLineRanges, readMetrics } from '../lib/difficulty/index.ts';
import { quantileSorted } from '../lib/stats/index.ts';
import { loadPack } from '../lib/templates/index.ts';
import {
  LEAK_DEFINITION,
  LeakIndex,
  PoolParamsSchema,
  readShadowSourceIds,
  renderTwin,
  scenarioTurns,
  TURNS_DEFINITION,
  ValidationParamsSchema,
  type HeldOut,
  type LeakMatch,
} from '../lib/pool/index.ts';
import {
  corpusOf,
  corpusStats,
  countNgrams,
  distinctNBatched,
  klFromCounts,
  normalizeText,
  TEXT_STAT_DEFINITIONS,
} from '../lib/text/index.ts';

const LISTED = 20;
const HINTS = {
  distinct_2:
    'add templates or persona/style lines, or vary the wording of the existing ones (seeds 001: "template expansion")',
  kl: 'pack_v2 reads too much like pack_v1: rewrite templates in new wording rather than copying v1 phrasing',
  roles: 'declare more roles in templates/pack_v2/roles.json (≥ 4), each with persona lines',
  styles: 'declare more styles in templates/pack_v2/styles.json (≥ 3), each with directive lines',
  duplicates: 'raise template × role × style combinations (more templates or persona lines) or use more source items',
  len_min: 'lengthen short templates or raise pool.length.min so short items get longer templates',
  len_max: 'trim long contexts, or check the base model max_seq_len before raising the limit (seeds 002 §五)',
  leak: 'a pool item repeats a held-out (shadow) question: check that seed_pool excludes sample_manifest.json source_ids and content_keys, and remove near-identical questions (the report lists both texts)',
  mix: "the realised task mix is off RC1's target (validation.mix_target): set pool.mix to the target and check that each task has enough eligible items",
};

interface Row {
  id: string;
  task: string;
  source: string;
  role: string;
  style: string;
  clarify: boolean;
  text: string;
}

const LENGTH_DEFINITION =
  'length = len_tokens of the difficulty metrics: Qwen3 tokens of the user turns, the clarification reply and the title and text of every context document (what the model reads)';

/** The hint of a source-reuse check: how many more source questions the task needs, and how to add them. */
function reuseHint(task: string, more: number): string {
  return `${task} needs at least ${more} more distinct source questions at this pool size: add them as a Hugging Face Parquet or JSONL export (e.g. the dataset's train split) in data/raw/${task}/ (see data/raw/${task}/SOURCE.md), or build a smaller pool`;
}

export default defineRule({
  name: 'pool_validation',
  version: 1,
  params: z.object({ validation: ValidationParamsSchema, pool: PoolParamsSchema }),
  async run(ctx) {
    const { validation: v, pool: poolCfg } = ctx.params;
    const poolPath = ctx.input('pool');
    const shadow = await readShadowSourceIds(ctx.inputs('shadow'));
    const v1 = await loadPack(ctx.inputs('v1'), ctx.root);
    const raw = await loadSources(
      ctx
        .inputs('raw')
        .filter((f) => dataFileFormat(f) !== null)
        .sort(),
      { onError: 'skip', root: ctx.root },
    );
    const items = new Map<string, SourceItem>(raw.items.map((i) => [sourceKey(i), i]));
    const heldOut = raw.items.filter((i) => shadow.ids.has(i.source_id) || shadow.contentKeys.has(questionKey(i)));
    const heldOutKeys = new Set(heldOut.map((i) => questionKey(i)));
    const heldOutQuestions = heldOut.map((i) => ({
      id: sourceKey(i),
      question: i.question,
      context: scenarioContext(i),
    }));
    const leakIndex = new LeakIndex(heldOutQuestions, v.leak.ngram);
    const metricsFile = ctx.input('metrics');
    const lengths = new Map((await readMetrics(metricsFile, ctx.root)).map((m) => [m.id, m.len_tokens]));

    const rows: Row[] = [];
    const seen = new Set<string>();
    const perSource = new Map<string, number>();
    /** Per source key: whether its question is held out (a source is rendered many times). */
    const sameSourceOf = new Map<string, boolean>();
    const leaks: (LeakMatch & {
      id: string;
      source: string;
      same_source: boolean;
      text: string;
      held_out_question: string;
    })[] = [];
    const outOfRange: { id: string; length: number }[] = [];
    const otherBest: number[] = [];
    let duplicates = 0,
      lenMin = Infinity,
      lenMax = 0,
      turnsMax = 0,
      otherSources = 0;
    await scanPool(
      { pool: poolPath, heldOut: heldOutQuestions, ngram: v.leak.ngram, leakIndex, signal: ctx.signal },
      (s) => {
        const { text, norm } = s;
        if (seen.has(norm)) duplicates += 1;
        else seen.add(norm);
        const key = `${s.task}/${s.source_id}`;
        perSource.set(key, (perSource.get(key) ?? 0) + 1);
        const length = lengths.get(s.id);
        if (length === undefined)
          throw new RuleError(
            `pool_validation: scenario ${s.id} has no line in ${displayPath(metricsFile, ctx.root)}; rebuild the difficulty metrics of this pool`,
          );
        if (s.failure !== undefined) throw s.failure;
        lenMin = Math.min(lenMin, length);
        lenMax = Math.max(lenMax, length);
        if (length < v.length.min || length > v.length.max) outOfRange.push({ id: s.id, length });
        turnsMax = Math.max(turnsMax, s.turns);
        let sameSource = sameSourceOf.get(key);
        if (sameSource === undefined) {
          const item = items.get(key);
          sameSource = item !== undefined && heldOutKeys.has(questionKey(item));
          sameSourceOf.set(key, sameSource);
        }
        const leak = s.leak;
        if (!sameSource) {
          otherSources += 1;
          otherBest.push(leak?.similarity ?? 0);
        }
        if (leak && leak.similarity > v.leak.max_similarity) {
          leaks.push({
            id: s.id,
            source: key,
            same_source: sameSource,
            ...leak,
            text,
            held_out_question: items.get(leak.shadowId)?.question ?? '',
          });
        }
        rows.push({
          id: s.id,
          task: s.task,
          source: key,
          role: s.role,
          style: s.style,
          clarify: s.clarify,
          text,
        });
        if (rows.length % 5000 === 0) {
          ctx.progress(rows.length, rows.length + 1, 'scenarios');
          ctx.signal.throwIfAborted();
        }
      },
    );
    const n = rows.length;
    if (n === 0) throw new RuleError(`pool_validation: ${poolPath} holds no scenario`);

    const sample = ctx
      .rng(deriveSeed(v.seed, 'sample'))
      .shuffle(rows)
      .slice(0, v.sample.batch_size * v.sample.batches);
    const docs = sample.map((r) => corpusOf(r.text.split('\n')));
    const twins = (salt: string) =>
      sample.map((r) => {
        const item = items.get(r.source);
        if (!item)
          throw new RuleError(
            `pool_validation: scenario ${r.id} names source ${r.source}, which the raw inputs do not hold`,
          );
        return corpusOf(renderTwin(v1, item, r.clarify, ctx.rng(deriveSeed(v.seed, `${salt}:${r.id}`))) ?? []);
      });
    const base = twins('twin');
    const statOpts = (salt: string) => ({
      batchSize: v.sample.batch_size,
      maxBatches: v.sample.batches,
      zipfMaxRank: v.zipf_max_rank,
      rng: ctx.rng(deriveSeed(v.seed, salt)),
    });
    const stats = corpusStats(docs, statOpts('batches'));
    const baseStats = corpusStats(base, statOpts('batches'));
    // KL(pool ‖ v1 twins) and the noise floor KL(second twins ‖ v1 twins): the twins' n-grams counted once for both.
    const baseCounts = countNgrams(base.flat(), v.kl.n);
    const kl = klFromCounts(countNgrams(docs.flat(), v.kl.n), baseCounts, v.kl.alpha);
    const klNoise = klFromCounts(countNgrams(twins('control').flat(), v.kl.n), baseCounts, v.kl.alpha);

    const tally = (key: 'role' | 'style') => {
      const counts: Record<string, number> = {};
      for (const r of rows) counts[r[key]] = (counts[r[key]] ?? 0) + 1;
      return {
        count: Object.keys(counts).length,
        scenarios: Object.fromEntries(
          Object.keys(counts)
            .sort()
            .map((k) => [k, counts[k]]),
        ),
      };
    };
    const roles = tally('role');
    const styles = tally('style');
    const weights = Object.fromEntries(TASKS.map((t) => [t, v.mix_target[t] ?? 0]));
    const wsum = Object.values(weights).reduce((a, b) => a + b, 0);
    const mix = Object.fromEntries(
      TASKS.map((t) => {
        const count = rows.filter((r) => r.task === t).length;
        const target = wsum > 0 ? weights[t]! / wsum : 0;
        return [t, { count, share: count / n, target, deviation_pp: Math.abs(count / n - target) * 100 }];
      }),
    );
    const maxDev = Math.max(...TASKS.map((t) => mix[t]!.deviation_pp));
    const reuse = Object.fromEntries(
      TASKS.filter((t) => mix[t]!.count > 0).map((t) => {
        const counts = [...perSource].filter(([k]) => k.startsWith(`${t}/`)).map(([, c]) => c);
        const scenarios = mix[t]!.count;
        const distinct = counts.length;
        const max = Math.max(...counts);
        // Enough questions for the average to fit, and, at this pool's unevenness (max / mean), for the most-rendered one too.
        const needed = Math.max(
          Math.ceil(scenarios / v.reuse.max_renderings_per_source),
          Math.ceil(scenarios * v.reuse.min_distinct_source_share),
          Math.ceil((distinct * max) / v.reuse.max_renderings_per_source),
        );
        return [
          t,
          {
            scenarios,
            distinct_sources: distinct,
            distinct_share: distinct / scenarios,
            max_renderings: max,
            mean_renderings: scenarios / distinct,
            more_sources_needed: Math.max(0, needed - distinct),
          },
        ];
      }),
    ) as Record<
      string,
      {
        scenarios: number;
        distinct_sources: number;
        distinct_share: number;
        max_renderings: number;
        mean_renderings: number;
        more_sources_needed: number;
      }
    >;
    const round = (x: number, d = 4) => Number(x.toFixed(d));
    const tol = v.mix_tolerance_pp;

    const checks = [
      check('distinct_2', round(stats.distinct_2.mean), '>=', v.min_distinct_2, HINTS.distinct_2),
      check(`kl${v.kl.n}_vs_v1`, round(kl), '>=', v.min_kl, HINTS.kl),
      check('roles', roles.count, '>=', v.min_roles, HINTS.roles),
      check('styles', styles.count, '>=', v.min_styles, HINTS.styles),
      check('duplicate_rate', round(duplicates / n, 6), '<=', v.max_duplicate_rate, HINTS.duplicates),
      check('length_min', lenMin, '>=', v.length.min, HINTS.len_min),
      check('length_max', lenMax, '<=', v.length.max, HINTS.len_max),
      check('shadow_leaks', leaks.length, '<=', v.leak.max_leaks, HINTS.leak),
      ...Object.entries(reuse).flatMap(([t, r]) => [
        check(
          `reuse_${t}_max_renderings_per_source`,
          r.max_renderings,
          '<=',
          v.reuse.max_renderings_per_source,
          reuseHint(t, r.more_sources_needed),
        ),
        check(
          `reuse_${t}_distinct_source_share`,
          round(r.distinct_share),
          '>=',
          v.reuse.min_distinct_source_share,
          reuseHint(t, r.more_sources_needed),
        ),
      ]),
      check('mix_max_deviation_pp', round(maxDev, 3), '<=', tol, HINTS.mix),
      ...TASKS.map((t) => check(`mix_${t}_deviation_pp`, round(mix[t]!.deviation_pp, 3), '<=', tol, HINTS.mix)),
    ];
    const clarified = rows.filter((r) => r.clarify).length;
    ctx.progress(n, n, 'scenarios');
    return {
      checks,
      report: {
        pool: { path: displayPath(poolPath, ctx.root), scenarios: n },
        sample: {
          scenarios: sample.length,
          batch_size: v.sample.batch_size,
          batches: stats.distinct_2.batches,
          seed: v.seed,
        },
        stats: { ...stats, kl: { n: v.kl.n, alpha: v.kl.alpha, value: kl, noise_floor: klNoise } },
        baseline_v1_twins: baseStats,
        distinct_2_by_batch_size: Object.fromEntries(
          [v.sample.batch_size, 100, sample.length]
            .filter((x, i, a) => a.indexOf(x) === i && x <= sample.length)
            .map((size) => [
              size,
              distinctNBatched(docs, 2, size, Math.floor(sample.length / size), ctx.rng(deriveSeed(v.seed, 'by-size')))
                .mean,
            ]),
        ),
        roles,
        styles,
        duplicates: { count: duplicates, rate: duplicates / n },
        length: { min: lenMin, max: lenMax, out_of_range: outOfRange.length, examples: outOfRange.slice(0, LISTED) },
        turns: { max: turnsMax, configured_max: poolCfg.max_turns },
        clarify: { count: clarified, rate: clarified / n, configured: poolCfg.clarify_rate },
        leaks: {
          held_out_items: leakIndex.heldOutItems,
          ngram: v.leak.ngram,
          threshold: v.leak.max_similarity,
          count: leaks.length,
          of_held_out_sources: leaks.filter((l) => l.same_source).length,
          of_other_sources: leaks.filter((l) => !l.same_source).length,
          // Flags among scenarios whose source question is not held out: an upper bound on the false-positive rate (a flagged one may still be a near-duplicate of a held-out question).
          flag_rate_other_sources:
            otherSources === 0 ? null : leaks.filter((l) => !l.same_source).length / otherSources,
          // Not gated: how close scenarios of other sources come to the threshold (the flag rate alone counts only those past it).
          best_similarity_other_sources: bestSimilarity(otherBest, v.leak.max_similarity),
          examples: leaks.slice(0, LISTED),
        },
        reuse,
        mix,
        definitions: {
          ...TEXT_STAT_DEFINITIONS,
          text: 'the user turns of each scenario, one segment per turn',
          distinct_2_by_batch_size:
            'the same distinct-2 at other batch sizes over the same sample, for reference (not gated): corpus-level distinct-n falls as the batch grows',
          sample: `distinct-n per batch of ${v.sample.batch_size} scenarios (the PPO batch size), mean over ${stats.distinct_2.batches} batches of a seeded shuffle; TTR, Zipf (ranks 1..${v.zipf_max_rank}) and KL over the same ${sample.length} scenarios`,
          kl_baseline: `Q = the same sampled scenarios re-rendered with pack_v1 (same item, same kind); noise_floor = KL of a second, differently seeded pack_v1 rendering against Q (α = ${v.kl.alpha}, ${v.kl.n}-grams)`,
          duplicates: "duplicate rate = scenarios whose normalised user turns equal an earlier scenario's / scenarios",
          length: LENGTH_DEFINITION,
          turns: TURNS_DEFINITION,
          leak: LEAK_DEFINITION,
          best_similarity_other_sources:
            'over the pool scenarios whose source question is not held out: the best leak similarity of each (0 when none shares a gram), its p50, p99 (type-7 quantiles) and max, and margin = threshold − max (not gated; a small margin means an innocent scenario comes close to being flagged)',
          reuse:
            "per task: renderings of each source question (scenarios with its task/source_id; source items are identified by their normalised question, so a repeated question is one item), the largest count, and distinct questions / scenarios; more_sources_needed = max(ceil(scenarios / max_renderings_per_source), ceil(scenarios * min_distinct_source_share), ceil(distinct * largest count / max_renderings_per_source)) - distinct questions (the last term: at the pool's present unevenness of reuse)",
          roles_styles: 'count = distinct role (style) labels among all scenarios',
          mix: "share = scenarios of the task / scenarios; deviation = |share − normalised validation.mix_target weight| (RC1's target, not the generator's pool.mix) in percentage points",
        },
      },
    };
  },
});

function bestSimilarity(
  values: number[],
  threshold: number,
): { scenarios: number; p50: number; p99: number; max: number; margin: number } | null {
  if (values.length === 0) return null;
  const sorted = Float64Array.from(values).sort();
  const r = (x: number) => Number(x.toFixed(4));
  const max = sorted[sorted.length - 1]!;
  return {
    scenarios: sorted.length,
    p50: r(quantileSorted(sorted, 0.5)),
    p99: r(quantileSorted(sorted, 0.99)),
    max: r(max),
    margin: r(threshold - max),
  };
}

/** What the validation reads of one scenario: a pure function of its line and the held-out questions. */
export interface Scanned {
  id: string;
  task: string;
  source_id: string;
  role: string;
  style: string;
  clarify: boolean;
  /** The user turns, one per line. */
  text: string;
  /** normalizeText(text): the duplicate key. */
  norm: string;
  turns: number;
  leak: LeakMatch | null;
  /**
   * What computing turns or leak threw, if anything: each() throws it after its check that the
   * scenario has a metrics line, the order of the checks in a one-pass scan (a line with no
   * metrics line is reported as such even when it is also malformed). From a scan worker it is
   * the error rebuilt by fromErrorData.
   */
  failure?: unknown;
}

/** An error as it crosses from a scan worker: its constructor's name, message and stack. */
interface ErrorData {
  name: string;
  message: string;
  stack?: string;
}

const BUILT_IN_ERRORS: Record<string, ErrorConstructor> = {
  TypeError,
  RangeError,
  SyntaxError,
  ReferenceError,
  EvalError,
  URIError,
};

function toErrorData(e: unknown): ErrorData {
  const err = e instanceof Error ? e : new Error(String(e));
  return { name: err.name, message: err.message, ...(err.stack ? { stack: err.stack } : {}) };
}

/** The error a scan worker sent, as the same built-in class (TypeError, SyntaxError, …) with its own stack. */
export function fromErrorData(d: ErrorData): Error {
  const err = new (BUILT_IN_ERRORS[d.name] ?? Error)(d.message);
  if (err.name !== d.name) err.name = d.name;
  if (d.stack) err.stack = d.stack;
  return err;
}

function scanLine(line: string, leakIndex: LeakIndex): Scanned {
  const s = JSON.parse(line) as Scenario;
  const text = s.messages.map((m) => m.content).join('\n');
  const scanned: Scanned = {
    id: s.id,
    task: s.task,
    source_id: s.source_id,
    role: s.role,
    style: s.style,
    clarify: s.needs_clarification,
    text,
    norm: normalizeText(text),
    turns: 0,
    leak: null,
  };
  try {
    scanned.turns = scenarioTurns(s);
    scanned.leak = leakIndex.best(s.clarification ? [text, s.clarification] : [text], s.context);
  } catch (e) {
    scanned.failure = e;
  }
  return scanned;
}

/** Pool bytes per scan thread: a smaller pool is scanned in the rule's thread alone. */
export const BYTES_PER_SCAN_THREAD = 8 << 20;
const ROLE = 'rc1-pool-validation-scan';
const SCAN_BATCH = 512;

interface ScanData {
  role: string;
  pool: string;
  /** The worker scans the lines that start at or after this byte. */
  from: number;
  heldOut: HeldOut[];
  ngram: number;
}
type ScanMessage = { batch: Scanned[] } | { end: true } | { error: ErrorData };

/**
 * Calls each() with every non-blank line of the pool, scanned, in pool order; the first error in
 * pool order (a line that is not JSON, or one each() throws) is thrown. With two threads (a pool of
 * 2 × bytesPerThread or more), a worker scans the lines that start in the second half of the file
 * while this thread scans and counts the first. Returns the number of threads used.
 */
export async function scanPool(
  o: {
    pool: string;
    heldOut: HeldOut[];
    ngram: number;
    leakIndex: LeakIndex;
    signal?: AbortSignal;
    bytesPerThread?: number;
  },
  each: (s: Scanned) => void,
): Promise<number> {
  const size = statSync(o.pool).size;
  // bytesPerThread given (tests): two threads by size alone; else also only where 2 CPUs are.
  const two =
    size >= 2 * (o.bytesPerThread ?? BYTES_PER_SCAN_THREAD) &&
    (o.bytesPerThread !== undefined || availableParallelism() >= 2);
  const from = two ? Math.floor(size / 2) : Infinity;
  const queue: ScanMessage[] = [];
  let wake: (() => void) | undefined;
  const notify = (): void => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  let failure: Error | undefined;
  const worker = two
    ? new Worker(new URL(import.meta.url), {
        workerData: { role: ROLE, pool: o.pool, from, heldOut: o.heldOut, ngram: o.ngram } satisfies ScanData,
      })
    : undefined;
  worker?.on('message', (m: ScanMessage) => {
    queue.push(m);
    notify();
  });
  worker?.on('error', (e) => {
    failure ??= e;
    notify();
  });
  worker?.on('exit', (code) => {
    if (code !== 0) failure ??= new Error(`pool_validation: the scan worker exited with code ${code}`);
    notify();
  });
  const onAbort = (): void => notify();
  o.signal?.addEventListener('abort', onAbort);
  try {
    let start = 0;
    for await (const r of readLineRanges(o.pool)) {
      const lineStart = start;
      start = r.offset;
      if (lineStart >= from) break;
      if (!blankRange(r.buf, r.start, r.end)) each(scanLine(r.buf.toString('utf8', r.start, r.end), o.leakIndex));
    }
    if (!worker) return 1;
    for (;;) {
      const m = queue.shift();
      if (m === undefined) {
        if (failure) throw failure;
        o.signal?.throwIfAborted();
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        continue;
      }
      if ('end' in m) return 2;
      if ('error' in m) throw fromErrorData(m.error);
      for (const s of m.batch) {
        if (s.failure !== undefined) s.failure = fromErrorData(s.failure as ErrorData);
        each(s);
      }
    }
  } finally {
    o.signal?.removeEventListener('abort', onAbort);
    await worker?.terminate();
  }
}

function serveScan(data: ScanData): void {
  const port = parentPort!;
  void (async () => {
    const leakIndex = new LeakIndex(data.heldOut, data.ngram);
    let batch: Scanned[] = [];
    try {
      // Only the lines that start at or after `from`: the first half is not read here at all.
      for await (const r of readLineRanges(data.pool, { from: data.from })) {
        if (blankRange(r.buf, r.start, r.end)) continue;
        const scanned = scanLine(r.buf.toString('utf8', r.start, r.end), leakIndex);
        if (scanned.failure !== undefined) scanned.failure = toErrorData(scanned.failure);
        batch.push(scanned);
        if (batch.length >= SCAN_BATCH) {
          port.postMessage({ batch });
          batch = [];
        }
      }
    } catch (e) {
      port.postMessage({ batch });
      port.postMessage({ error: toErrorData(e) });
      return;
    }
    port.postMessage({ batch });
    port.postMessage({ end: true });
  })();
}

if (!isMainThread && (workerData as { role?: unknown } | null)?.role === ROLE) serveScan(workerData as ScanData);
