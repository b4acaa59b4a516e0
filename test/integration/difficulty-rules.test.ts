// The three difficulty rules chained on a small pool of hand-built scenarios (several renderings
// per source item, some with a clarification exchange):
//   tokenizer_table --> table --\
//   pool --> difficulty_metrics --> metrics --> balanced_pool --> balanced, balance report
//                                         \--------------------> difficulty_report (gate)
// Each rule runs compiled as the engine compiles it, with a fake context (outputs in a temp dir);
// the worker_threads path runs from a compiled lib/difficulty with one worker per byte of pool.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import YAML from 'yaml';
import type { Rule } from '../../packages/engine/src/api/index.ts';
import { compileDifficulty, compileRule, runRule } from '../fixtures/difficulty/rule-harness.ts';
import { GSM8K, HOTPOTQA, STRATEGYQA, scenario, writeJsonl } from '../fixtures/difficulty/scenarios.ts';

const PREFIXES = [
  '',
  'Quick question: ',
  'As a teacher, I would like to know this. ',
  'My friend Anna asked me, and I could not answer. ',
];
const sha = (b: string | Buffer) => createHash('sha256').update(b).digest('hex');

function pool(): unknown[] {
  const out = [];
  for (const item of [GSM8K, HOTPOTQA, STRATEGYQA]) {
    for (let i = 0; i < 16; i++) {
      const q = PREFIXES[i % PREFIXES.length] + item.question;
      const clarify = i % 3 === 0 ? { clarification: 'The one I read about yesterday.' } : {};
      const messages = i % 5 === 4 ? ['I have a question.', q] : [q];
      out.push(scenario(item, { id: `${item.task}-${i}`, messages, ...clarify }));
    }
  }
  return out;
}

// The shipped bands, voting dimensions, balance and gate (configs/difficulty.yaml).
const SHIPPED = (
  YAML.parse(readFileSync(join(import.meta.dirname, '../../configs/difficulty.yaml'), 'utf8')) as {
    difficulty: Record<string, any>;
  }
).difficulty;
const BANDS = SHIPPED.bands;
const DIMS = SHIPPED.dimensions;
const BALANCE = { seed: 20250821, target: SHIPPED.balance.target };
const GATE = SHIPPED.gate;

let dir = '';
let poolFile = '';
let tableFile = '';
const rules: Record<string, Rule> = {};
let difficulty: Awaited<ReturnType<typeof compileDifficulty>>;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rc1-diff-rules-'));
  difficulty = await compileDifficulty(dir);
  for (const name of ['tokenizer_table', 'difficulty_metrics', 'balanced_pool', 'difficulty_report'])
    rules[name] = await compileRule(name, dir);
  poolFile = writeJsonl(join(dir, 'data/rollouts/rc1_seed.jsonl'), pool());
  const t = await runRule(rules.tokenizer_table!, {
    params: {},
    inputs: {},
    outputs: { table: 'data/tokenizer/qwen3_bpe.bin' },
    outDir: join(dir, 'table'),
    root: dir,
  });
  assert.match(String(t.result.summary), /151387 merges, 26 added tokens/);
  tableFile = t.out('data/tokenizer/qwen3_bpe.bin');
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function metricsRun(name: string, workers: number, file = poolFile): Promise<string> {
  const out = 'data/rollouts/rc1_seed.metrics.jsonl';
  const run = await runRule(rules.difficulty_metrics!, {
    params: { difficulty: { metrics: { multi_entity_min: 3, workers } } },
    inputs: { pool: [file], table: [tableFile] },
    outputs: { metrics: out },
    outDir: join(dir, name),
    root: dir,
  });
  assert.match(String(run.result.summary), /scenarios/);
  return run.out(out);
}

/** writeMetrics on two workers: with the package (no table) unless a table is given. */
async function workersRun(name: string, file = poolFile, table?: string): Promise<string> {
  const out = join(dir, name, 'metrics.jsonl');
  const s = await difficulty.writeMetrics({
    pool: file,
    file: 'bad.jsonl',
    out,
    multiEntityMin: 3,
    ...(table ? { table } : {}),
    workers: 2,
    bytesPerWorker: 1,
    signal: new AbortController().signal,
    progress: () => {},
  });
  assert.equal(s.workers, 2);
  return out;
}

test('tokenizer_table writes the same bytes on every build, with the sha256 of its payload in its header', async () => {
  const again = await runRule(rules.tokenizer_table!, {
    params: {},
    inputs: {},
    outputs: { table: 'data/tokenizer/qwen3_bpe.bin' },
    outDir: join(dir, 'table-again'),
    root: dir,
  });
  const a = await readFile(tableFile);
  const b = await readFile(again.out('data/tokenizer/qwen3_bpe.bin'));
  assert.equal(sha(a), sha(b));
  const t = difficulty.readQwen3Table(tableFile);
  assert.equal(t.header.usable, true);
  assert.equal(sha(a.subarray(a.length - 4 * (256 + 3 * t.header.merges))), t.header.sha256);
});

test('difficulty_metrics writes one line per scenario in pool order, the same bytes on one thread or two workers', async () => {
  const one = await metricsRun('m1', 1);
  const two = await workersRun('m2');
  const text = await readFile(one, 'utf8');
  assert.equal(sha(text), sha(await readFile(two)));
  const lines = text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { id: string; turns: number });
  assert.deepEqual(
    lines.map((l) => l.id),
    (pool() as { id: string }[]).map((s) => s.id),
  );
  assert.equal(lines.find((l) => l.id === 'gsm8k-0')!.turns, 4);
  assert.equal(lines.find((l) => l.id === 'gsm8k-4')!.turns, 3);
});

test('counting with the tokenizer_table output gives the same metrics bytes as the tokenizer package, on one thread and on workers, also for texts with added tokens', async () => {
  // Added tokens in a turn, the clarification and a document (the table counter hands those texts to the package).
  const special = (pool() as Record<string, any>[]).map((s, i) => {
    if (i === 3)
      s.messages = [...s.messages, { ...s.messages[0], content: 'Answer after <|im_start|>assistant please.' }];
    if (i === 7 && s.clarification !== null) s.clarification = `${s.clarification} <think>hm</think>`;
    if (i === 40) s.context = [{ ...s.context[0], text: `${s.context[0].text} <|endoftext|>` }, ...s.context.slice(1)];
    return s;
  });
  const specialFile = writeJsonl(join(dir, 'special.jsonl'), special);
  for (const file of [poolFile, specialFile]) {
    const byPackage = await readFile(await workersRun(`pkg-${file.length}`, file));
    assert.equal(sha(await readFile(await metricsRun(`tab1-${file.length}`, 1, file))), sha(byPackage));
    assert.equal(sha(await readFile(await workersRun(`tab2-${file.length}`, file, tableFile))), sha(byPackage));
  }
});

test('difficulty_metrics names the file, line and field of a malformed scenario and of a repeated id, with workers too', async () => {
  const lines = (await readFile(poolFile, 'utf8')).trimEnd().split('\n');
  const bad = join(dir, 'bad.jsonl');
  await writeFile(bad, [...lines.slice(0, 30), lines[0], ...lines.slice(30)].join('\n') + '\n');
  await assert.rejects(workersRun('dup', bad), {
    name: 'DataError',
    message: 'bad.jsonl:31: id: expected an id not used before (line 1 has it), got "gsm8k-0"',
  });
  const broken = lines.slice(0, 40);
  broken[35] = broken[35]!
    .replace('"needs_clarification":false', '"needs_clarification":"no"')
    .replace('"needs_clarification":true', '"needs_clarification":"no"');
  await writeFile(bad, broken.join('\n') + '\n');
  await assert.rejects(metricsRun('bad1', 1, bad), {
    name: 'DataError',
    message: 'bad.jsonl:36: needs_clarification: expected true or false, got "no"',
  });
  await assert.rejects(workersRun('bad2', bad), {
    name: 'DataError',
    message: 'bad.jsonl:36: needs_clarification: expected true or false, got "no"',
  });
});

test('difficulty_metrics on workers reads blank, whitespace-only and CRLF lines as one thread does, and names the same line numbers', async () => {
  const lines = (await readFile(poolFile, 'utf8')).trimEnd().split('\n');
  const odd = join(dir, 'odd.jsonl');
  // CRLF endings, an empty line, ASCII and Unicode (U+3000, U+00A0) whitespace-only lines, no final newline.
  const text = [
    lines[0],
    '',
    ...lines.slice(1, 20),
    ' \t ',
    ...lines.slice(20, 30),
    '\u3000\u00a0',
    ...lines.slice(30),
  ].join('\r\n');
  await writeFile(odd, text);
  const one = await metricsRun('odd1', 1, odd);
  const two = await workersRun('odd2', odd);
  assert.equal(sha(await readFile(one)), sha(await readFile(two)));
  assert.equal((await readFile(two, 'utf8')).trimEnd().split('\n').length, lines.length);
  const broken = text.replace('"needs_clarification":false', '"needs_clarification":"no"');
  const at = broken.slice(0, broken.indexOf('"needs_clarification":"no"')).split('\n').length;
  await writeFile(odd, broken);
  await assert.rejects(metricsRun('odd3', 1, odd), { message: new RegExp(`^odd.jsonl:${at}: needs_clarification`) });
  await assert.rejects(workersRun('odd4', odd), { message: new RegExp(`^bad.jsonl:${at}: needs_clarification`) });
});

async function balancedRun(
  name: string,
  metricsFile: string,
  seed = BALANCE.seed,
): Promise<{ jsonl: string; report: Record<string, unknown>; path: string }> {
  const outs = ['data/rollouts/rc1_seed.balanced.jsonl', 'reports/rc1/balance_report.json'];
  const run = await runRule(rules.balanced_pool!, {
    params: { difficulty: { bands: BANDS, dimensions: DIMS, balance: { ...BALANCE, seed } } },
    inputs: { pool: [poolFile], metrics: [metricsFile] },
    outputs: { pool: outs[0]!, report: outs[1]! },
    outDir: join(dir, name),
    root: dir,
  });
  return {
    jsonl: await readFile(run.out(outs[0]!), 'utf8'),
    report: JSON.parse(await readFile(run.out(outs[1]!), 'utf8')) as Record<string, unknown>,
    path: run.out(outs[0]!),
  };
}

test('balanced_pool copies a line as bytes only where that is what withDifficulty() gives (trailing whitespace, a difficulty field already there, non-ASCII and invalid UTF-8, short lines), and reads the id from its head as lineId() does', async () => {
  const lines = (await readFile(poolFile, 'utf8')).trimEnd().split('\n');
  const at = { file: 'x', line: 0, unit: 'line' } as const;
  const cases: Buffer[] = [
    ...lines.map((l) => Buffer.from(l)),
    Buffer.from(`${lines[1]}  \t`),
    Buffer.from(`${lines[2]}\u3000`),
    Buffer.from(lines[3]!.replace(/\}$/, ',"difficulty":"hard"}')),
    Buffer.from(lines[4]!.replace('"messages":[{', '"note":"naïve café — 東京 🙂","messages":[{')),
    Buffer.concat([Buffer.from(lines[5]!.slice(0, 40)), Buffer.from([0xff, 0xfe]), Buffer.from(lines[5]!.slice(40))]),
    Buffer.from(`{"id":"${'x'.repeat(300)}","task":"gsm8k"}`),
    Buffer.from(`{"id":"caf\u00e9 ${'é'.repeat(130)}","a":1}`),
    Buffer.from('{}'),
    Buffer.from('}'),
    Buffer.from('{"id":"a"} '),
  ];
  let copied = 0;
  for (const b of cases) {
    // Framed in a larger buffer, as a line of a read chunk is.
    const buf = Buffer.concat([Buffer.from('junk\n'), b, Buffer.from('\nmore')]);
    const [start, end] = [5, 5 + b.length];
    const text = b.toString('utf8');
    const attempt = (f: () => string): string => {
      try {
        return f();
      } catch (e) {
        return `throws ${(e as Error).message}`;
      }
    };
    assert.equal(
      attempt(() => difficulty.lineIdOf(buf, start, end, at)),
      attempt(() => difficulty.lineId(text, at)),
      text.slice(0, 60),
    );
    for (const bucket of ['easy', 'medium', 'hard'] as const) {
      const bytes = difficulty.withDifficultyBytes(buf, start, end, bucket);
      if (bytes === null) continue;
      copied += 1;
      assert.equal(
        Buffer.concat(bytes).toString('hex'),
        Buffer.from(difficulty.withDifficulty(text, bucket, at)).toString('hex'),
      );
    }
  }
  assert.ok(copied >= 3 * (lines.length + 4), `${copied} copied`);
  // Never copied: a line that already has a difficulty field, invalid UTF-8, Unicode whitespace after '}', '{}'.
  for (const k of [lines.length + 1, lines.length + 2, lines.length + 4, lines.length + 7]) {
    const b = cases[k]!;
    assert.equal(difficulty.withDifficultyBytes(b, 0, b.length, 'easy'), null, b.toString('utf8').slice(-40));
  }
});

test('difficulty_report reads a balanced line from its head and tail bytes as balancedEntry() reads its text, and falls back to it', async () => {
  const lines = (await readFile(poolFile, 'utf8')).trimEnd().split('\n');
  const at = { file: 'x', line: 0, unit: 'line' } as const;
  const withBucket = (l: string, b: string): string => `${l.slice(0, -1)},"difficulty":"${b}"}`;
  const cases = [
    ...lines.map((l, i) => withBucket(l, ['easy', 'medium', 'hard'][i % 3]!)),
    withBucket(lines[0]!.replace('"messages":[{', '"note":"naïve 東京 🙂","messages":[{'), 'hard'),
    `{"id":"${'y'.repeat(300)}","difficulty":"easy"}`,
    '{"id":"a","difficulty":"medium"}',
    '{"difficulty":"hard","id":"b"}',
    '{"id":"c","difficulty":"extreme"}',
    '{"id":7,"difficulty":"easy"}',
    '{"id":"d","x":1,"difficulty":"easy"} ',
  ];
  const attempt = (f: () => unknown): string => {
    try {
      return JSON.stringify(f());
    } catch (e) {
      return `throws ${(e as Error).message}`;
    }
  };
  for (const text of cases) {
    const b = Buffer.from(text);
    const buf = Buffer.concat([Buffer.from('head\n'), b, Buffer.from('\ntail')]);
    assert.equal(
      attempt(() => difficulty.balancedEntryOf(buf, 5, 5 + b.length, at)),
      attempt(() => difficulty.balancedEntry(text, at)),
      text.slice(0, 60),
    );
  }
});

test('balanced_pool keeps pool lines byte for byte with their bucket appended, deterministically, and reports what it dropped', async () => {
  const m = await metricsRun('mb', 1);
  const a = await balancedRun('b1', m);
  const b = await balancedRun('b2', m);
  assert.equal(sha(a.jsonl), sha(b.jsonl));
  const poolLines = (await readFile(poolFile, 'utf8')).trimEnd().split('\n');
  const kept = a.jsonl.trimEnd().split('\n').filter(Boolean);
  let last = -1;
  for (const line of kept) {
    const at = poolLines.findIndex((p) => line.startsWith(p.slice(0, -1) + ',"difficulty":"'));
    assert.ok(at > last, 'kept lines are pool lines, in pool order');
    last = at;
    assert.match(line, /,"difficulty":"(easy|medium|hard)"\}$/);
  }
  const report = a.report as {
    scenarios: { pool: number; kept: number; dropped: number; duplicated: number };
    tasks: Record<
      string,
      { kept: Record<string, number>; dropped: Record<string, number>; available: Record<string, number> }
    >;
  };
  assert.deepEqual(report.scenarios, { pool: 48, kept: kept.length, dropped: 48 - kept.length, duplicated: 0 });
  for (const t of Object.values(report.tasks))
    for (const k of ['easy', 'medium', 'hard']) assert.equal(t.available[k], t.kept[k]! + t.dropped[k]!);
});

test('balanced_pool refuses metrics that are not of this pool', async () => {
  const m = await metricsRun('mx', 1);
  const lines = (await readFile(m, 'utf8')).trimEnd().split('\n');
  const swapped = join(dir, 'swapped.jsonl');
  await writeFile(swapped, [lines[1], lines[0], ...lines.slice(2)].join('\n') + '\n');
  await assert.rejects(balancedRun('bx', swapped), {
    name: 'DataError',
    message: /rc1_seed\.jsonl:1: id: expected the id of line 1 of swapped\.jsonl/,
  });
});

test('difficulty_report reads the balanced pool against the metrics and returns a check per task and overall', async () => {
  const m = await metricsRun('mr', 1);
  const b = await balancedRun('br', m);
  const run = await runRule(rules.difficulty_report!, {
    params: { difficulty: { bands: BANDS, dimensions: DIMS, gate: GATE } },
    inputs: { metrics: [m], balanced: [b.path] },
    outputs: ['reports/rc1/difficulty_report.json'],
    outDir: join(dir, 'r'),
    root: dir,
  });
  const names = run.result.checks!.map((c) => c.name);
  for (const scope of ['all', 'gsm8k', 'hotpotqa', 'strategyqa'])
    assert.ok(names.includes(`${scope}.hard_share`), scope);
  assert.ok(
    run.result.checks!.every((c) => c.status !== 'fail' || (c.hint ?? '').length > 0),
    'every failing check has a hint',
  );
  const report = run.result.report as { balanced: { all: { n: number } } };
  assert.equal(report.balanced.all.n, b.jsonl.trimEnd().split('\n').filter(Boolean).length);
});
