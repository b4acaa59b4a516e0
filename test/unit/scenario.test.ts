// Scenario building: the plain rendering, context documents, tools and reference trajectories
// per task, and the fixed key order that makes the JSONL byte-stable.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildScenario, plainRender, shadowScenarioId, type SourceItem } from '../../lib/data/index.ts';

const origin = { file: 'f.jsonl', line: 1, unit: 'line' as const };

const gsm8k: SourceItem = {
  task: 'gsm8k',
  source_id: 'gsm8k-train-1',
  format: 'gsm8k',
  origin,
  question: 'Natalia sold clips to 48 friends in April and half as many in May. How many in all?',
  gold_answer: '72',
  steps: ['Natalia sold 48/2 = 24 clips in May.', 'Natalia sold 48+24 = 72 clips altogether.'],
  calc: [
    { expr: '48/2', result: '24', step: 0 },
    { expr: '48+24', result: '72', step: 1 },
  ],
};

const hotpotqa: SourceItem = {
  task: 'hotpotqa',
  source_id: '5a8b',
  format: 'hotpotqa-distractor',
  origin,
  question: 'Were Scott Derrickson and Ed Wood of the same nationality?',
  gold_answer: 'yes',
  paragraphs: [
    { title: 'Ed Wood (film)', sentences: ['Ed Wood is a 1994 film.'] },
    { title: 'Scott Derrickson', sentences: ['Scott Derrickson is an American director.', ' He lives in LA.'] },
    { title: 'Ed Wood', sentences: ['Ed Wood was an American filmmaker.'] },
  ],
  supporting: [
    { title: 'Scott Derrickson', sent_id: 0 },
    { title: 'Ed Wood', sent_id: 0 },
    { title: 'Scott Derrickson', sent_id: 1 },
  ],
  type: 'comparison',
  level: 'hard',
};

const strategyqa: SourceItem = {
  task: 'strategyqa',
  source_id: '2bc9',
  format: 'strategyqa',
  origin,
  question: 'Are more people today related to Genghis Khan than Julius Caesar?',
  gold_answer: 'yes',
  term: 'Genghis Khan',
  description: 'founder of the Mongol Empire',
  facts: ['Julius Caesar had three children.', 'Genghis Khan had sixteen children.'],
  decomposition: [
    'How many kids did Julius Caesar have?',
    'How many kids did Genghis Khan have?',
    'Is #2 greater than #1?',
  ],
};

const plain = (item: SourceItem) => buildScenario(item, plainRender(item, shadowScenarioId(item)));

test('a plain scenario renders the question as the only user turn, with no clarification', () => {
  const s = plain(gsm8k);
  assert.equal(s.id, 'shadow-gsm8k-gsm8k-train-1');
  assert.deepEqual([s.role, s.style, s.template_id], ['user', 'plain', 'plain_v0']);
  assert.deepEqual(s.messages, [{ role: 'user', content: gsm8k.question }]);
  assert.deepEqual([s.needs_clarification, s.clarification], [false, null]);
});

test("scenario keys come in the data model's fixed order", () => {
  assert.deepEqual(Object.keys(plain(hotpotqa)), [
    'id',
    'task',
    'source_id',
    'role',
    'style',
    'template_id',
    'messages',
    'context',
    'tools',
    'gold_answer',
    'needs_clarification',
    'clarification',
    'reference',
  ]);
});

test('a GSM8K reference calls calc for each annotation before its step and ends with the gold answer', () => {
  const s = plain(gsm8k);
  assert.deepEqual(s.tools, ['calc']);
  assert.deepEqual(s.context, []);
  assert.deepEqual(s.reference, {
    steps: [
      { type: 'tool_call', tool: 'calc', input: '48/2', output: '24' },
      { type: 'thought', text: 'Natalia sold 48/2 = 24 clips in May.' },
      { type: 'tool_call', tool: 'calc', input: '48+24', output: '72' },
      { type: 'thought', text: 'Natalia sold 48+24 = 72 clips altogether.' },
    ],
    final_answer: '72',
  });
});

test('a HotpotQA scenario offers every paragraph to wiki and its reference looks up each supporting title once', () => {
  const s = plain(hotpotqa);
  assert.deepEqual(s.tools, ['wiki']);
  assert.deepEqual(
    s.context.map((d) => [d.id, d.title, d.supporting]),
    [
      ['p1', 'Ed Wood (film)', false],
      ['p2', 'Scott Derrickson', true],
      ['p3', 'Ed Wood', true],
    ],
  );
  assert.equal(s.context[1]!.text, 'Scott Derrickson is an American director. He lives in LA.');
  assert.deepEqual(s.reference.steps, [
    {
      type: 'tool_call',
      tool: 'wiki',
      input: 'Scott Derrickson',
      output: 'Scott Derrickson is an American director. He lives in LA.',
    },
    { type: 'tool_call', tool: 'wiki', input: 'Ed Wood', output: 'Ed Wood was an American filmmaker.' },
  ]);
  assert.equal(s.reference.final_answer, 'yes');
});

test('a StrategyQA scenario offers its facts as documents and reasons through the decomposition to yes/no', () => {
  const s = plain(strategyqa);
  assert.deepEqual(s.tools, ['wiki']);
  assert.deepEqual(s.context, [
    { id: 'fact1', title: 'Genghis Khan', text: 'Julius Caesar had three children.', supporting: true },
    { id: 'fact2', title: 'Genghis Khan', text: 'Genghis Khan had sixteen children.', supporting: true },
  ]);
  assert.deepEqual(
    s.reference.steps.map((x) => x.type === 'thought' && x.text),
    strategyqa.decomposition,
  );
  assert.equal(s.reference.final_answer, 'yes');
  assert.equal(s.gold_answer, 'yes');
});

test('a rendering that needs clarification opens the reference with the clarification exchange', () => {
  const render = {
    ...plainRender(gsm8k, 'seed-1'),
    needs_clarification: true,
    clarification: 'Half as many as in April.',
    clarifying_question: 'How many did she sell in May?',
  };
  const s = buildScenario(gsm8k, render);
  assert.deepEqual(s.reference.steps[0], {
    type: 'clarify',
    ask: 'How many did she sell in May?',
    reply: 'Half as many as in April.',
  });
  assert.equal(s.clarification, 'Half as many as in April.');
  assert.throws(
    () => buildScenario(gsm8k, { ...render, clarifying_question: null }),
    /internal error: scenario seed-1/,
  );
});
