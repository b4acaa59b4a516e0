// The file rollout source (lib/rollouts/file-source.ts) and the scenario reader: records of a
// real model run joined with their scenarios, success computed here; a bad line fails with
// file:line: field: expected …, got ….
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileRollouts, readScenarios } from '../../lib/rollouts/index.ts';
import { fixtureScenarios, toJsonlText } from '../helpers/scoring-fixtures.ts';

function tempFiles(files: Record<string, string>): { dir: string; path: (n: string) => string; done: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'rc1-file-source-'));
  for (const [n, text] of Object.entries(files)) writeFileSync(join(dir, n), text);
  return { dir, path: (n) => join(dir, n), done: () => rmSync(dir, { recursive: true, force: true }) };
}

test('run records are joined with their scenarios, numbered per scenario and ordered by scenario then candidate', async () => {
  const scenarios = (await fixtureScenarios(2)).slice(0, 3);
  const [a, b] = scenarios;
  const run = [
    { scenario_id: b!.id, policy: 'qwen3-4b', trajectory: { steps: [], final_answer: b!.gold_answer } },
    {
      scenario_id: a!.id,
      policy: 'qwen3-4b',
      candidate_index: 1,
      trajectory: { steps: [{ type: 'thought', text: 'thinking' }], final_answer: 'nonsense' },
    },
    { scenario_id: a!.id, policy: 'qwen3-4b', trajectory: a!.reference },
    { scenario_id: b!.id, policy: 'qwen3-4b', trajectory: { steps: [], final_answer: 'nope' } },
  ];
  const t = tempFiles({ 'run.jsonl': toJsonlText(run) });
  try {
    const res = await fileRollouts([t.path('run.jsonl')], scenarios, t.dir);
    assert.deepEqual(
      res.rollouts.map((r) => r.rollout_id),
      [`${a!.id}#1`, `${a!.id}#2`, `${b!.id}#0`, `${b!.id}#1`],
    );
    assert.deepEqual(res.missing, [scenarios[2]!.id]);
    assert.deepEqual(res.perScenario, { min: 2, max: 2 });
    const [a1, a2, b0, b1] = res.rollouts;
    assert.equal(a1!.success, false);
    assert.deepEqual(a1!.error_modes.includes('wrong_answer'), true, 'file rollouts get detected error modes');
    assert.equal(a2!.success, true);
    assert.equal(b0!.success, true);
    assert.equal(b1!.success, false);
    assert.ok(res.rollouts.every((r) => r.source === 'file' && r.policy === 'qwen3-4b'));
  } finally {
    t.done();
  }
});

test('a malformed run line fails with file, line, field and what was expected', async () => {
  const scenarios = await fixtureScenarios(1);
  const id = scenarios[0]!.id;
  const good = JSON.stringify({ scenario_id: id, policy: 'p', trajectory: { steps: [], final_answer: 'x' } });
  const cases: [string, RegExp][] = [
    [
      JSON.stringify({
        scenario_id: id,
        policy: 'p',
        trajectory: { steps: [{ type: 'tool_call', tool: 'search', input: 'q', output: '' }], final_answer: 'x' },
      }),
      /^run\.jsonl:3: trajectory\.steps\[0\]\.tool: expected one of "wiki" \| "calc", got "search"$/,
    ],
    [
      JSON.stringify({ scenario_id: id, policy: 'p', trajectory: { steps: [{ type: 'answer' }], final_answer: 'x' } }),
      /^run\.jsonl:3: trajectory\.steps\[0\]\.type: expected a step of type "clarify", "tool_call" or "thought", got "answer"$/,
    ],
    [
      JSON.stringify({ scenario_id: id, policy: 'p', trajectory: { steps: [], final_answer: 42 } }),
      /^run\.jsonl:3: trajectory\.final_answer: expected a string, got number 42$/,
    ],
    [
      JSON.stringify({ scenario_id: id, policy: 'p', trajectory: { steps: [] } }),
      /^run\.jsonl:3: trajectory\.final_answer: expected a string, got nothing \(the field is missing\)$/,
    ],
    [
      JSON.stringify({ scenario_id: id, policy: 'p', score: 1, trajectory: { steps: [], final_answer: 'x' } }),
      /^run\.jsonl:3: score: expected no such field/,
    ],
    [
      JSON.stringify({ scenario_id: 'no-such-scenario', policy: 'p', trajectory: { steps: [], final_answer: 'x' } }),
      /^run\.jsonl:3: scenario_id: expected the id of a scenario in the `scenarios` inputs, got "no-such-scenario"$/,
    ],
    [
      JSON.stringify({
        scenario_id: id,
        policy: 'p',
        candidate_index: 0,
        trajectory: { steps: [], final_answer: 'x' },
      }),
      /^run\.jsonl:3: candidate_index: expected a candidate index not yet used/,
    ],
    ['{not json', /^run\.jsonl:3: \(json\): expected a JSON object/],
  ];
  for (const [line, re] of cases) {
    const t = tempFiles({ 'run.jsonl': `${good}\n\n${line}\n` });
    try {
      await assert.rejects(fileRollouts([t.path('run.jsonl')], scenarios, t.dir), (e: Error) => {
        assert.equal(e.name, 'DataError');
        assert.match(e.message, re);
        return true;
      });
    } finally {
      t.done();
    }
  }
});

test('scenario files are validated line by line, keep the pool difficulty, and a repeated scenario id is an error at its second line', async () => {
  const scenarios = await fixtureScenarios(1);
  const t = tempFiles({
    'a.jsonl': toJsonlText([{ ...scenarios[0], extra_field_from_the_pool: 'ignored', difficulty: 'medium' }]),
    'b.jsonl': toJsonlText([scenarios[1], scenarios[0]]),
    'bad.jsonl': toJsonlText([{ ...scenarios[0], needs_clarification: 'no' }]),
  });
  try {
    const [read] = await readScenarios([t.path('a.jsonl')], t.dir);
    assert.equal(read!.difficulty, 'medium', "the balanced pool's bucket is kept");
    assert.ok(!('extra_field_from_the_pool' in read!), 'other extra fields are dropped');
    await assert.rejects(
      readScenarios([t.path('a.jsonl'), t.path('b.jsonl')], t.dir),
      /^DataError: b\.jsonl:2: id: expected a scenario id not used before \(first used at a\.jsonl:1\)/,
    );
    await assert.rejects(
      readScenarios([t.path('bad.jsonl')], t.dir),
      /bad\.jsonl:1: needs_clarification: expected a boolean, got "no"/,
    );
  } finally {
    t.done();
  }
});
