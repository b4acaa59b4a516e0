// The executor's decision queue (packages/engine/src/executor/decision-queue.ts): one decision at
// a time, first come first served within a lane, targets that follow committed work first, and a
// turn of the event loop (a worker's message, a signal) once decisions have run for a slice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MessageChannel } from 'node:worker_threads';
import { DecisionQueue } from '../../packages/engine/src/executor/decision-queue.ts';

/** Each caller takes the queue, records its name, and gives it back. */
async function decideAll(q: DecisionQueue, calls: { name: string; urgent: boolean }[]): Promise<string[]> {
  const order: string[] = [];
  await Promise.all(
    calls.map(async ({ name, urgent }) => {
      await q.acquire(urgent);
      order.push(name);
      await Promise.resolve();
      void q.release();
    }),
  );
  return order;
}

test('decisions are taken one at a time, first come first served', async () => {
  const q = new DecisionQueue(Number.POSITIVE_INFINITY);
  let holding = 0;
  let most = 0;
  await Promise.all(
    ['a', 'b', 'c', 'd'].map(async () => {
      await q.acquire(false);
      holding++;
      most = Math.max(most, holding);
      await new Promise((r) => setImmediate(r));
      holding--;
      void q.release();
    }),
  );
  assert.equal(most, 1);
  const order = await decideAll(
    q,
    ['a', 'b', 'c', 'd'].map((name) => ({ name, urgent: false })),
  );
  assert.deepEqual(order, ['a', 'b', 'c', 'd']);
});

test('a target that follows committed work is decided before targets that were ready earlier', async () => {
  const q = new DecisionQueue(Number.POSITIVE_INFINITY);
  const order = await decideAll(q, [
    { name: 'a', urgent: false },
    { name: 'b', urgent: false },
    { name: 'c', urgent: false },
    { name: 'x', urgent: true },
    { name: 'y', urgent: true },
  ]);
  // 'a' holds the queue when the others arrive; the urgent ones go next, in their own order.
  assert.deepEqual(order, ['a', 'x', 'y', 'b', 'c']);
});

test('the event loop gets a turn only once decisions have run for the slice', async () => {
  let clock = 0;
  let turns = 0;
  const turn = async (): Promise<void> => {
    turns++;
  };
  const still = new DecisionQueue(5, () => clock, turn);
  await decideAll(
    still,
    Array.from({ length: 20 }, (_, i) => ({ name: `t${i}`, urgent: false })),
  );
  assert.equal(turns, 0, 'no time passed: no turn');
  const moving = new DecisionQueue(5, () => clock, turn);
  const order: string[] = [];
  await Promise.all(
    Array.from({ length: 20 }, async (_, i) => {
      await moving.acquire(false);
      order.push(`t${i}`);
      clock += 1; // each decision takes 1 ms
      await moving.release();
    }),
  );
  assert.equal(order.length, 20);
  assert.equal(turns, 4, 'one turn per 5 ms of decisions');
});

test("a message that arrives during a long run of decisions is handled before the run ends (a rule's result)", async () => {
  const q = new DecisionQueue(2);
  const { port1, port2 } = new MessageChannel();
  let handledAfter = -1;
  let decided = 0;
  port1.once('message', () => {
    handledAfter = decided;
  });
  port2.postMessage('result');
  const N = 40;
  await Promise.all(
    Array.from({ length: N }, async () => {
      await q.acquire(false);
      const until = performance.now() + 1; // a decision of 1 ms
      while (performance.now() < until);
      decided++;
      void q.release();
    }),
  );
  await new Promise((r) => setImmediate(r));
  port1.close();
  assert.ok(handledAfter >= 0, 'the message was handled');
  assert.ok(handledAfter < N / 2, `handled after ${handledAfter} of ${N} decisions, not after all of them`);
});
