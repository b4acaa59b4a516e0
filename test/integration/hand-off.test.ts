// The worker pool's hand-off through the real CLI and its real worker (runner/worker-pool.ts,
// job-queue.ts): under -j 2 a ready rule may wait on a busy worker, but no more than 2 rules ever
// run at once, the start of a rule is told when it really starts, and a rule that waited behind a
// long one is taken back by the worker that goes idle instead of waiting for the long one.
//   slow (1.5 s, CPU-bound)   q1 … q6 (30 ms each)   all independent
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TestRig } from '../helpers/rig.ts';

const QUICK = ['q1', 'q2', 'q3', 'q4', 'q5', 'q6'];

const rig = (): TestRig =>
  new TestRig({
    'rc1.build.ts': `import { definePipeline, defineTarget } from 'rc1-build';
export default definePipeline({ targets: [
${['slow', ...QUICK].map((n) => `  defineTarget({ name: '${n}', rule: 'rules/spin.ts', outputs: ['out/${n}.json'] }),`).join('\n')}
] });
`,
    // Spins (a synchronous, CPU-bound rule reads no message while it runs) and writes when it ran.
    'rules/spin.ts': `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
export default defineRule({ name: 'spin', version: 1, run(ctx) {
  const now = () => performance.timeOrigin + performance.now();
  const start = now();
  const ms = ctx.target === 'slow' ? 1500 : 30;
  while (now() - start < ms) {}
  fs.writeFileSync(ctx.output('out/' + ctx.target + '.json'), JSON.stringify({ start, end: now() }));
}});
`,
  });

test('under -j 2 at most 2 rules run at once (as run and as told), and quick rules never wait for a long one', () => {
  const r = rig();
  try {
    const res = r.run(['-j', '2', '--json']);
    assert.equal(res.code, 0, res.stderr);
    // As told: start and done events never show more than 2 rules running.
    let running = 0;
    let most = 0;
    for (const e of res.events) {
      if (e.event === 'start') most = Math.max(most, ++running);
      if (e.event === 'done' || e.event === 'failed') running--;
    }
    assert.equal(most, 2, 'the events show 2 rules running at most');
    assert.equal(res.events.filter((e) => e.event === 'done').length, 7);
    // As run: the rules' own clocks.
    const ran = Object.fromEntries(
      ['slow', ...QUICK].map((n) => [n, JSON.parse(r.read(`out/${n}.json`)) as { start: number; end: number }]),
    );
    const edges = Object.values(ran)
      .flatMap((x) => [
        [x.start, 1],
        [x.end, -1],
      ])
      .sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
    let now = 0;
    let atOnce = 0;
    for (const [, d] of edges) atOnce = Math.max(atOnce, (now += d!));
    assert.equal(atOnce, 2, 'the rules themselves never overlapped more than 2 at once');
    for (const q of QUICK)
      assert.ok(ran[q]!.end < ran.slow!.end, `${q} ended before the slow rule (it was not held behind it)`);
    // A quick rule's time is its own, not the time it waited on a worker.
    for (const e of res.events.filter((x) => x.event === 'done' && x.target !== 'slow'))
      assert.ok((e.ms as number) < 1000, `${e.target as string}: ${e.ms as number} ms`);
  } finally {
    r.cleanup();
  }
});
