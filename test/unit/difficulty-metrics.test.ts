// Difficulty metrics of hand-built scenarios: each value worked out by hand from the definitions
// in lib/difficulty/metrics.ts (turns, tool hops, calc operators, entities, connectives per 100
// words, pronouns, sentence-level 3-gram clue overlap, ambiguity flags), len_tokens as the Qwen3
// count of the user turns, the clarification reply and the context documents.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import {
  MetricsComputer,
  countCalcOperators,
  countInlineOperators,
  entitySpans,
  SPAN_MEMO,
  spanMemoSize,
  loadQwen3,
  requestText,
  spanNames,
  type Qwen3Counter,
} from '../../lib/difficulty/index.ts';
import { GSM8K, HOTPOTQA, STRATEGYQA, scenario } from '../fixtures/difficulty/scenarios.ts';

let qwen: Qwen3Counter;
let mc: MetricsComputer;
before(async () => {
  qwen = await loadQwen3();
  mc = new MetricsComputer(qwen, { multiEntityMin: 3 });
});

test('a gsm8k scenario counts its calc calls as tool hops, its solution lines as reasoning hops and their operators as numeric operations', () => {
  const s = scenario(GSM8K);
  assert.deepEqual(mc.compute(s), {
    id: 't-gsm8k-gsm8k-train-1048',
    task: 'gsm8k',
    len_tokens: qwen.count(GSM8K.question),
    turns: 2,
    tool_hops: 2,
    hops: 2,
    distractors: 0,
    entities: 4,
    ops_numeric: 2,
    connector_density: 0,
    coref_pronouns: 3,
    clue_overlap: null,
    ambiguity_flags: ['multi-entity', 'open-time-range'],
    needs_clarification: false,
  });
  assert.deepEqual(Object.keys(mc.compute(s)), [
    'id',
    'task',
    'len_tokens',
    'turns',
    'tool_hops',
    'hops',
    'distractors',
    'entities',
    'ops_numeric',
    'connector_density',
    'coref_pronouns',
    'clue_overlap',
    'ambiguity_flags',
    'needs_clarification',
  ]);
});

test('a clarification exchange adds two turns, its reply is read as request text and the item is under-specified', () => {
  const s = scenario(HOTPOTQA, { clarification: 'I mean the tower in France.' });
  assert.equal(requestText(s), 'Where was the Eiffel Tower built?\nI mean the tower in France.');
  const m = mc.compute(s);
  const docs = s.context.reduce((n, d) => n + qwen.count(d.title) + qwen.count(d.text), 0);
  assert.equal(
    m.len_tokens,
    qwen.count('Where was the Eiffel Tower built?') + qwen.count('I mean the tower in France.') + docs,
  );
  assert.deepEqual(
    [m.turns, m.tool_hops, m.entities, m.ops_numeric, m.connector_density, m.coref_pronouns],
    [4, 2, 2, 0, 0, 0],
  );
  // The question sentence (4 3-grams) and "The Eiffel Tower was built in Paris." (5) share "the eiffel tower": 1 / 8;
  // the reply sentence shares none.
  assert.equal(m.clue_overlap, 0.125);
  assert.deepEqual(m.ambiguity_flags, ['under-specified']);
  assert.equal(m.needs_clarification, true);
});

test('clue_overlap is the Jaccard of the question sentence with its most similar supporting sentence, distractors aside', () => {
  // "where was the eiffel tower built": 4 3-grams, 1 shared with the 5 of the first supporting sentence.
  assert.equal(mc.compute(scenario(HOTPOTQA)).clue_overlap, 0.125);
  const framed = scenario(HOTPOTQA, {
    messages: [
      'I am a teacher preparing a quiz for my class tonight.\nWhere was the Eiffel Tower built? Please answer briefly.',
    ],
  });
  assert.equal(mc.compute(framed).clue_overlap, 0.125, 'framing sentences do not dilute the question sentence');
  const copied = scenario(HOTPOTQA, { messages: ['Big Ben is a clock tower in London.'] });
  assert.equal(mc.compute(copied).clue_overlap, 0, 'Big Ben is a distractor, not supporting text');
  const verbatim = scenario(HOTPOTQA, { messages: ['The Eiffel Tower was built in Paris.'] });
  assert.equal(mc.compute(verbatim).clue_overlap, 1);
});

test('a strategyqa scenario counts comparison words in its question and decomposition as numeric operations', () => {
  const m = mc.compute(scenario(STRATEGYQA));
  // "faster" in the question, "less" in "Is #2 less than #1?".
  assert.deepEqual([m.ops_numeric, m.tool_hops, m.turns, m.entities, m.clue_overlap], [2, 0, 2, 1, 0]);
});

test('connector density is connectives per 100 tokenize() words, English and Chinese', () => {
  const en = mc.compute(
    scenario(GSM8K, { messages: ['If Tom has 3 apples and gives 1 away, then how many are left?'] }),
  );
  assert.equal(en.connector_density, 21.4286); // if, and, then in 14 words
  const zh = mc.compute(scenario(GSM8K, { messages: ['因为下雨，所以王先生没有去公园。他说明天再去。'] }));
  assert.equal(zh.connector_density, 10); // 因为, 所以 in 20 characters
  assert.equal(zh.coref_pronouns, 1);
  assert.equal(zh.entities, 1);
  assert.deepEqual(zh.ambiguity_flags, []);
  const multi = mc.compute(scenario(GSM8K, { messages: ['She left as well as he did, even though it rained.'] }));
  assert.equal(multi.connector_density, 18.1818); // "as well as", "even though" count once each in 11 words
});

test('ambiguity flags: a pronoun before any name, an open time range without a year, a vague placeholder', () => {
  const flags = (q: string) => mc.compute(scenario(HOTPOTQA, { messages: [q] })).ambiguity_flags;
  assert.deepEqual(flags('How old was he when he won the Nobel Prize?'), ['pronoun-without-antecedent']);
  assert.deepEqual(flags('Who is the current CEO of Apple?'), ['open-time-range']);
  assert.deepEqual(flags('Who is the current CEO of Apple in 2024?'), []);
  assert.deepEqual(flags('I read something about Paris.'), ['under-specified']);
  assert.deepEqual(flags('Did Alan Turing, Ada Lovelace and Charles Babbage meet?'), ['multi-entity']);
});

test('entities are distinct names and numbers; sentence starts, possessives and sentence ends are trimmed', () => {
  const keys = (t: string) => [...new Set(entitySpans(t).map((e) => e.key))];
  assert.deepEqual(
    keys('In two years, Ophelia will be four times as old as Lennon. If Lennon is 8, how old is Ophelia?'),
    ['ophelia', 'lennon', '#8'],
  );
  assert.deepEqual(keys("The Battle of the Bulge and Kapaun Mt. Carmel High School's team"), [
    'battle of the bulge',
    'kapaun mt. carmel high school',
  ]);
  assert.deepEqual(keys('It cost $1,200 or 3.5 times 1200.'), ['#1200', '#3.5']);
  assert.deepEqual(keys('《红楼梦》的作者和张老师说了3,000元'), ['红楼梦', '张老师', '#3000']);
  assert.deepEqual(keys("I'm a parent. Don't worry. Sorry, here's one: Feel free to ask John what Tom can't do."), [
    'john',
    'tom',
  ]);
});

test('a name span that recurs gives the same entities, each at its own offset in each text', () => {
  const span = 'Dr. Smith. If Lennon';
  // spanNames: the span cut after "Smith." (a sentence end), each name with where it starts in the span.
  assert.deepEqual(spanNames(span), [
    { key: 'dr. smith', at: 0 },
    { key: 'lennon', at: 14 },
  ]);
  const named = (t: string) => entitySpans(t).filter((e) => !e.numeric);
  const once = named(`Ask ${span} came.`);
  assert.deepEqual(
    once.map((e) => [e.key, e.at]),
    [
      ['dr. smith', 4],
      ['lennon', 18],
    ],
  );
  // The same span again, later in another text and twice in one: the same keys, offsets of that text.
  const twice = named(`We said: ${span} came, and ${span} came.`);
  assert.deepEqual(
    twice.map((e) => [e.key, e.at]),
    [
      ['dr. smith', 9],
      ['lennon', 23],
      ['dr. smith', 40],
      ['lennon', 54],
    ],
  );
});

test('entity spans stay right past the size of the span memo (it starts again when full)', () => {
  // 70 000 distinct spans (more than the memo holds), then the first ones again.
  const name = (i: number) => `Person${i.toString(36)} Smith`;
  for (let i = 0; i < 70_000; i++) {
    assert.equal(entitySpans(`I met ${name(i)} today.`)[0]!.key, name(i).toLowerCase());
    assert.ok(spanMemoSize() <= SPAN_MEMO, `the memo holds ${spanMemoSize()} spans`);
  }
  for (let i = 0; i < 10; i++)
    assert.deepEqual(entitySpans(`Then ${name(i)} left.`), [{ key: name(i).toLowerCase(), at: 5, numeric: false }]);
});

test('calculator operators are binary operators; a sign is not one', () => {
  assert.equal(countCalcOperators('80*20/100'), 2);
  assert.equal(countCalcOperators('-5+3'), 1);
  assert.equal(countCalcOperators('(2+3)*4'), 2);
  assert.equal(countCalcOperators('2**3'), 1);
  assert.equal(countCalcOperators('10 % 3'), 1);
  assert.equal(countCalcOperators('42'), 0);
  assert.equal(countInlineOperators('3 + 4 and 12*5 and 10 - 2, but 1990-1995 is a range'), 3);
});

test('metrics are the same whatever order scenarios are computed in (caches do not change values)', () => {
  const a = new MetricsComputer(qwen, { multiEntityMin: 3 });
  const b = new MetricsComputer(qwen, { multiEntityMin: 3 });
  const list = [
    scenario(GSM8K),
    scenario(HOTPOTQA),
    scenario(STRATEGYQA),
    scenario(HOTPOTQA, { id: 'x', clarification: 'The one in Paris.' }),
  ];
  const forward = list.map((s) => JSON.stringify(a.compute(s)));
  const backward = [...list]
    .reverse()
    .map((s) => JSON.stringify(b.compute(s)))
    .reverse();
  assert.deepEqual(forward, backward);
});

test('hops count supporting look-ups (hotpotqa) and decomposition steps (strategyqa); distractors the documents that do not support the answer', () => {
  const h = mc.compute(scenario(HOTPOTQA));
  assert.deepEqual([h.hops, h.distractors], [2, 1]);
  const q = mc.compute(scenario(STRATEGYQA));
  assert.deepEqual([q.hops, q.distractors, q.tool_hops], [3, 0, 0]);
  const c = mc.compute(scenario(STRATEGYQA, { clarification: 'The Toyota one.' }));
  assert.deepEqual([c.hops, c.turns], [3, 4], 'a clarification exchange adds turns, never reasoning hops');
});
