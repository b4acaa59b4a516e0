// The shipped RC1 data half through the CLI, in a copy of the project at a small size (one scale
// stage of 400 scenarios, the dev profile's first stage: at 200, gsm8k's 15 under-specified
// scenarios leave a difficulty band empty, so balancing over both axes keeps none):
//   templates/pack_v1,v2 --> diversity_report ─┐
//   data/raw/**, tokenizer_table --> shadow_set ┴─> seed_pool --> pool_validation, difficulty_metrics --> …
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { REPO, TestRig, collectEvents } from '../helpers/rig.ts';

function projectCopy(n = 400): TestRig {
  const rig = new TestRig();
  for (const p of ['rc1.build.ts', 'rules', 'lib', 'configs', 'data/raw', 'templates'])
    fs.cpSync(path.join(REPO, p), path.join(rig.dir, p), { recursive: true });
  const dev = rig.read('configs/profiles/dev.yaml').replace(/scale:\n(?: .*\n)+/, `scale:\n  stages: []\n  n: ${n}\n`);
  rig.write('configs/profiles/dev.yaml', dev);
  return rig;
}

const started = (events: Record<string, unknown>[]): string[] =>
  events
    .filter((e) => e.event === 'start')
    .map((e) => e.target as string)
    .sort();

test("reformatting a template file's whitespace reruns seed_pool, whose unchanged output stops the rebuild there (early cutoff)", () => {
  const rig = projectCopy();
  try {
    const first = rig.run(['pool_validation', 'difficulty_report', '--json']);
    assert.equal(first.code, 0, first.stdout.slice(-3000) + first.stderr);
    const file = 'templates/pack_v2/roles.json';
    rig.write(file, JSON.stringify(JSON.parse(rig.read(file)), null, 4) + '\n\n');
    const r = rig.run(['pool_validation', 'difficulty_report', '--json', '--explain']);
    assert.equal(r.code, 0);
    // The shadow set is rendered with pack_v2 too: it reruns, and its unchanged outputs stop there as well.
    assert.deepEqual(started(r.events), ['diversity_report', 'seed_pool', 'shadow_set']);
    const explain = r.events.filter((e) => e.event === 'explain') as {
      target: string;
      decision: string;
      reasons: string[];
    }[];
    assert.match(
      explain.find((e) => e.target === 'seed_pool')!.reasons.join('\n'),
      /input templates\/pack_v2\/roles\.json changed/,
    );
    for (const t of ['pool_validation', 'difficulty_metrics', 'balanced_pool', 'difficulty_report']) {
      assert.equal(explain.find((e) => e.target === t)!.decision, 'up-to-date', t);
    }
    const text = rig.run(['pool_validation', '--explain']);
    assert.match(text.stdout, /rc1 explain: pool_validation: up-to-date/);
  } finally {
    rig.cleanup();
  }
});

test('watch: editing a template rebuilds exactly the targets that read it', async () => {
  const rig = projectCopy();
  const child = rig.spawn(['watch', 'seed_pool', '--json']);
  const events = collectEvents<Record<string, unknown>>(child);
  const waiting = async (count: number): Promise<void> => {
    for (let i = 0; i < 1200; i++) {
      if (events.filter((e) => e.event === 'watch' && e.state === 'waiting').length >= count) return;
      await sleep(50);
    }
    throw new Error(`watch did not settle; last events ${JSON.stringify(events.slice(-5))}`);
  };
  try {
    await waiting(1);
    assert.deepEqual(started(events), ['diversity_report', 'seed_pool', 'shadow_set', 'tokenizer_table']);
    const mark = events.length;
    const file = 'templates/pack_v2/styles.json';
    rig.write(file, rig.read(file).replace(/"([^"]*[a-z])\."/, '"$1!"'));
    await waiting(2);
    assert.deepEqual(started(events.slice(mark)), ['diversity_report', 'seed_pool', 'shadow_set']);
    const rebuilt = events.slice(mark).find((e) => e.event === 'watch' && e.state === 'rebuilding') as {
      changed: string[];
    };
    assert.deepEqual(rebuilt.changed, [file]);
  } finally {
    child.kill('SIGINT');
    await new Promise((r) => child.on('exit', r));
    rig.cleanup();
  }
});
