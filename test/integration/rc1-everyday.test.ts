// The shipped RC1 pipeline, in a copy of the project: RUN_MODE=prod checks what its targets need
// (the live judge's key and endpoint, the policy server, the team's trainer) before anything
// runs, and a shadow set larger than the data is a data error with a hint.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { REPO, TestRig } from '../helpers/rig.ts';

function projectCopy(): TestRig {
  const rig = new TestRig();
  for (const p of ['rc1.build.ts', 'rules', 'lib', 'configs', 'data/raw', 'templates'])
    fs.cpSync(path.join(REPO, p), path.join(rig.dir, p), { recursive: true });
  return rig;
}

async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

const NO_KEYS = { OPENAI_API_KEY: '', REWARD_LIVE_MODE: '', POLICY_API_KEY: '' };

test('RUN_MODE=prod lists every unmet requirement of the targets to build in one message before running anything (exit 64)', async () => {
  const r = projectCopy();
  const port = await closedPort();
  const prodYaml = r.read('configs/profiles/prod.yaml');
  r.write(
    'configs/profiles/prod.yaml',
    `${prodYaml}  openai:\n    base_url: http://127.0.0.1:${port}/v1\nscoring_live:\n  base_url: http://127.0.0.1:${port}/judge/v1\n`,
  );
  let server: net.Server | null = null;
  try {
    const res = r.run(['train'], { ...NO_KEYS, RUN_MODE: 'prod' });
    assert.equal(res.code, 64, res.stdout + res.stderr);
    assert.match(res.stderr, /4 requirements of the targets to build are not met \(profile prod\); nothing was run/);
    assert.match(
      res.stderr,
      new RegExp(
        `http://127\\.0\\.0\\.1:${port}/v1 is not reachable \\(ECONNREFUSED\\) — the policy server the rollouts come from \\(rollouts\\.openai\\.base_url\\) \\(needed by [^)]*rollouts_shadow\\)`,
      ),
    );
    assert.match(
      res.stderr,
      new RegExp(
        `http://127\\.0\\.0\\.1:${port}/judge/v1 is not reachable \\(ECONNREFUSED\\) — the live judge's endpoint`,
      ),
    );
    assert.match(
      res.stderr,
      /\$OPENAI_API_KEY is not set — the live judge's API key [^\n]*\(needed by scores@1000, scores@5000, scores, probe_scorer\)/,
    );
    assert.match(
      res.stderr,
      /train\.engine: tfjs trains in a simulated environment, refused in prod — set train\.engine: command/,
    );
    assert.ok(!r.exists('data/shadow_eval_245.jsonl'), 'nothing ran');
    assert.ok(!r.exists('.rc1/trace.log') || !r.read('.rc1/trace.log').includes('"result"'), 'nothing was recorded');

    // The endpoints answer and the key is set; the trainer command and a heuristic judge remain.
    server = net.createServer((s) => s.destroy());
    await new Promise<void>((ok) => server!.listen(port, '127.0.0.1', ok));
    r.write(
      'configs/profiles/prod.yaml',
      `${r.read('configs/profiles/prod.yaml')}train:\n  engine: command\n  command:\n    argv: [no-such-trainer-rc1]\n`,
    );
    const next = r.run(['-n', 'train'], {
      ...NO_KEYS,
      RUN_MODE: 'prod',
      OPENAI_API_KEY: 'sk-test-not-real',
      REWARD_LIVE_MODE: '0',
    });
    assert.equal(next.code, 64, next.stdout + next.stderr);
    assert.match(next.stderr, /2 requirements of the targets to build are not met/);
    assert.match(
      next.stderr,
      /\$REWARD_LIVE_MODE is not one of 1, true, live, on, yes — prod scores with the live judge only/,
    );
    assert.match(
      next.stderr,
      /no-such-trainer-rc1 is not found on PATH — the trainer command \(train\.command\.argv\[0\]\) \(needed by train\)/,
    );
    assert.doesNotMatch(next.stderr, /sk-test-not-real/);

    const dev = r.run(['-n', 'train'], NO_KEYS);
    assert.equal(dev.code, 0, dev.stderr);
  } finally {
    server?.close();
    r.cleanup();
  }
});

test('a shadow set larger than the data is a data error naming the task, the counts and where to add records', () => {
  const r = projectCopy();
  try {
    r.write('configs/default.yaml', r.read('configs/default.yaml').replace(/^ {2}n: 245 /m, '  n: 5000 '));
    const res = r.run(['shadow_set']);
    assert.equal(res.code, 1, res.stdout + res.stderr);
    const out = res.stdout + res.stderr;
    assert.match(out, /shadow set: task hotpotqa needs 2250 items but the sources have \d+ \(shadow\.n = 5000\)/);
    assert.match(
      out,
      /hint: add hotpotqa records to data\/raw\/hotpotqa, or lower shadow\.n \(5000\) or shadow\.stratify\.hotpotqa in configs\//,
    );
    assert.doesNotMatch(out, /internal error|RangeError|\n {4}at /);
  } finally {
    r.cleanup();
  }
});
