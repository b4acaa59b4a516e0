// The difficulty metrics' faster code paths against the code they replaced (kept here, verbatim, as
// the reference): the same results on random and hand-picked inputs, and the same DataError (field,
// expected, got) for every malformed scenario.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DataError, describeValue, type Location } from '../../lib/data/data-error.ts';
import { asScenario, countPhrases, phraseIndex, type PhraseIndex } from '../../lib/difficulty/index.ts';
import {
  CONNECTIVES_EN,
  CONNECTIVES_ZH,
  OPEN_TIME_EN,
  OPEN_TIME_ZH,
  PRONOUNS_EN,
  PRONOUNS_ZH,
  VAGUE_CUES_EN,
  VAGUE_CUES_ZH,
} from '../../lib/difficulty/lexicon.ts';
import { firstPhrase } from '../../lib/difficulty/text-cues.ts';

/** A seeded generator (mulberry32), so a failure can be replayed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

// ---- countPhrases / firstPhrase: the reference (closures over every / some) ----

function countPhrasesRef(tokens: readonly string[], index: PhraseIndex): number {
  let n = 0;
  let i = 0;
  while (i < tokens.length) {
    const candidates = index.get(tokens[i]!);
    let len = 0;
    if (candidates) {
      for (const p of candidates) {
        if (p.every((t, k) => tokens[i + k] === t)) {
          len = p.length;
          break;
        }
      }
    }
    if (len > 0) {
      n += 1;
      i += len;
    } else i += 1;
  }
  return n;
}

function firstPhraseRef(tokens: readonly string[], index: PhraseIndex): number {
  for (let i = 0; i < tokens.length; i++) {
    const candidates = index.get(tokens[i]!);
    if (candidates?.some((p) => p.every((t, k) => tokens[i + k] === t))) return i;
  }
  return -1;
}

test('countPhrases and firstPhrase equal the reference on random token lists over the lexicon phrases', () => {
  const indexes = [
    phraseIndex(CONNECTIVES_EN, CONNECTIVES_ZH),
    phraseIndex(PRONOUNS_EN, PRONOUNS_ZH),
    phraseIndex(VAGUE_CUES_EN, VAGUE_CUES_ZH),
    phraseIndex(OPEN_TIME_EN, OPEN_TIME_ZH),
    phraseIndex(['a b c', 'a b', 'a', 'b c d e', 'c c', 'd']),
  ];
  // Words of the phrases (so phrases and their prefixes occur, overlapping), plus others.
  const vocab = [...new Set(indexes.flatMap((ix) => [...ix.values()].flat(2)))];
  vocab.push('x', 'y', 'the', 'and');
  const r = rng(1);
  for (let n = 0; n < 3000; n++) {
    const len = Math.floor(r() * 40);
    const tokens = Array.from({ length: len }, () => pick(r, vocab));
    for (const ix of indexes) {
      assert.equal(countPhrases(tokens, ix), countPhrasesRef(tokens, ix), tokens.join(' '));
      assert.equal(firstPhrase(tokens, ix), firstPhraseRef(tokens, ix), tokens.join(' '));
    }
  }
});

test('countPhrases and firstPhrase equal the reference on hand-built indexes: an empty phrase, a bucket not led by its key, a phrase past the end', () => {
  const odd: PhraseIndex = new Map([
    ['a', [['a', 'b', 'c'], [], ['a']]],
    [
      'b',
      [
        ['x', 'b'],
        ['b', 'b'],
      ],
    ],
    ['c', [['c', 'd', 'e', 'f']]],
  ]);
  const cases = [[], ['a'], ['a', 'b'], ['a', 'b', 'c'], ['b'], ['b', 'b', 'b'], ['c', 'd', 'e'], ['x', 'b', 'c', 'd']];
  for (const t of cases) {
    assert.equal(countPhrases(t, odd), countPhrasesRef(t, odd), t.join(' '));
    assert.equal(firstPhrase(t, odd), firstPhraseRef(t, odd), t.join(' '));
  }
});

// ---- asScenario: the reference (forEach with the field name built per element) ----

function need(ok: boolean, at: Location, field: string, expected: string, got: unknown): void {
  if (!ok) throw new DataError(at, field, expected, describeValue(got));
}

function asScenarioRef(v: Record<string, unknown>, at: Location): unknown {
  need(typeof v.id === 'string' && v.id !== '', at, 'id', 'a non-empty string', v.id);
  need(typeof v.task === 'string' && v.task !== '', at, 'task', 'a non-empty string', v.task);
  need(Array.isArray(v.messages), at, 'messages', 'a list', v.messages);
  (v.messages as unknown[]).forEach((m, i) =>
    need(
      typeof (m as { content?: unknown })?.content === 'string',
      at,
      `messages[${i}].content`,
      'a string',
      (m as { content?: unknown })?.content,
    ),
  );
  need(Array.isArray(v.context), at, 'context', 'a list', v.context);
  (v.context as unknown[]).forEach((d, i) => {
    const doc = d as { title?: unknown; text?: unknown; supporting?: unknown } | null;
    need(
      typeof doc?.title === 'string' && typeof doc.text === 'string' && typeof doc.supporting === 'boolean',
      at,
      `context[${i}]`,
      'a document {title, text, supporting}',
      d,
    );
  });
  need(typeof v.needs_clarification === 'boolean', at, 'needs_clarification', 'true or false', v.needs_clarification);
  need(
    v.clarification === null || typeof v.clarification === 'string',
    at,
    'clarification',
    'a string or null',
    v.clarification,
  );
  const ref = v.reference as { steps?: unknown } | undefined;
  need(Array.isArray(ref?.steps), at, 'reference.steps', 'a list', ref?.steps);
  (ref!.steps as unknown[]).forEach((s, i) => {
    const step = s as { type?: unknown; input?: unknown; text?: unknown } | null;
    const ok =
      step?.type === 'clarify' ||
      (step?.type === 'tool_call' && typeof step.input === 'string') ||
      (step?.type === 'thought' && typeof step.text === 'string');
    need(ok, at, `reference.steps[${i}]`, 'a clarify, tool_call or thought step', s);
  });
  return v;
}

/** The outcome of a check: 'ok', or the DataError's parts (anything else is rethrown). */
function outcome(f: () => unknown): string {
  try {
    f();
    return 'ok';
  } catch (e) {
    if (!(e instanceof DataError)) throw e;
    return JSON.stringify([e.message, e.file, e.line, e.field, e.expected, e.got]);
  }
}

test('asScenario accepts and rejects exactly what the reference does, with the same DataError', () => {
  const at: Location = { file: 'data/pool.jsonl', line: 7, unit: 'line' };
  const good = () => ({
    id: 'rc1-1',
    task: 'hotpotqa',
    messages: [{ role: 'user', content: 'Who?' }, { content: 'And when?' }],
    context: [
      { title: 'A', text: 'a.', supporting: true },
      { title: 'B', text: 'b.', supporting: false },
    ],
    needs_clarification: false,
    clarification: null,
    reference: {
      steps: [{ type: 'clarify' }, { type: 'tool_call', tool: 'wiki', input: 'A' }, { type: 'thought', text: 'so' }],
    },
  });
  // Values a field may wrongly hold, as JSON gives them.
  const bad = (): unknown[] => [undefined, null, 0, 1.5, '', 'x', true, [], [1], {}, { content: 1 }];
  const r = rng(2);
  let rejected = 0;
  for (let n = 0; n < 4000; n++) {
    const v = good() as Record<string, unknown> & { [k: string]: unknown };
    // One to three random corruptions, at any depth the checks read.
    for (let k = 1 + Math.floor(r() * 3); k > 0; k--) {
      const where = Math.floor(r() * 12);
      const x = pick(r, bad());
      const msgs = v.messages as unknown[];
      const ctx = v.context as unknown[];
      const steps = (v.reference as { steps?: unknown[] } | undefined)?.steps;
      if (where === 0) v.id = x;
      else if (where === 1) v.task = x;
      else if (where === 2) v.messages = x;
      else if (where === 3 && Array.isArray(msgs)) msgs[Math.floor(r() * msgs.length)] = x;
      else if (where === 4 && Array.isArray(msgs)) msgs.push({ content: x });
      else if (where === 5) v.context = x;
      else if (where === 6 && Array.isArray(ctx)) ctx[Math.floor(r() * ctx.length)] = x;
      else if (where === 7 && Array.isArray(ctx)) ctx.push({ title: 'C', text: x, supporting: pick(r, [true, x]) });
      else if (where === 8) v.needs_clarification = x;
      else if (where === 9) v.clarification = x;
      else if (where === 10) v.reference = pick(r, [x, { steps: x }]);
      else if (where === 11 && Array.isArray(steps))
        steps[Math.floor(r() * steps.length)] = pick(r, [
          x,
          { type: 'tool_call', input: x },
          { type: 'thought', text: x },
        ]);
    }
    // As a pool line is: JSON text, parsed.
    const parsed = JSON.parse(JSON.stringify(v)) as Record<string, unknown>;
    const want = outcome(() => asScenarioRef(structuredClone(parsed), at));
    assert.equal(
      outcome(() => asScenario(structuredClone(parsed), at)),
      want,
      JSON.stringify(parsed),
    );
    if (want !== 'ok') rejected += 1;
  }
  assert.ok(rejected > 1000, `only ${rejected} corrupted scenarios were rejected`);
});

test("clue_overlap's inverted index gives jaccard()'s maximum over every pair of sentences, on random texts sharing words", async () => {
  const { bestJaccard, docGrams } = await import('../../lib/difficulty/metrics.ts');
  const { jaccard, ngrams, tokenize } = await import('../../lib/text/tokenize.ts');
  const SENTENCE_END = /(?<=[.!?])\s+|(?<=[。！？])|\n+/u;
  const sentenceSets = (t: string) =>
    t
      .split(SENTENCE_END)
      .map((x) => new Set(ngrams(tokenize(x), 3)))
      .filter((g) => g.size > 0);
  const r = rng(7);
  const words = 'the cat sat on a mat 1923 北京'.split(' ');
  const text = (sentences: number) =>
    Array.from({ length: sentences }, () =>
      Array.from({ length: 2 + Math.floor(r() * 9) }, () => words[Math.floor(r() * words.length)]).join(' '),
    ).join(r() < 0.5 ? '. ' : '\n');
  const counts = new Int32Array(64);
  let positive = 0;
  for (let trial = 0; trial < 400; trial++) {
    const doc = text(1 + Math.floor(r() * 6));
    const request = text(1 + Math.floor(r() * 4));
    let expected = 0;
    for (const a of sentenceSets(request))
      for (const g of sentenceSets(doc)) expected = Math.max(expected, jaccard(a, g));
    const index = docGrams(doc);
    let got = 0;
    for (const a of sentenceSets(request)) got = Math.max(got, bestJaccard(a, index, counts));
    assert.equal(got, expected, JSON.stringify({ doc, request }));
    assert.ok(
      counts.every((c) => c === 0),
      'the scratch counts are left zeroed',
    );
    if (expected > 0) positive++;
  }
  assert.ok(positive > 100, `expected many overlapping pairs, got ${positive}`);
});
