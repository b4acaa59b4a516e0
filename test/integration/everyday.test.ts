// Everyday use through the real CLI: a reader that closes the pipe, edits made while watch is
// building, a rule path typo, the output cache's size cap and `gc`, `clean` of rule state, and
// outputs of another profile.
//   src/a.txt --> a (slow: SLOW_MS) --> out/a.txt          (no inputs) --> big (BIG_KB of its param) --> out/big.bin
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CLI, TestRig, collectEvents } from '../helpers/rig.ts';
import { currentHolder } from '../../packages/engine/src/state/workspace-lock.ts';

const PIPELINE = `import { definePipeline, defineTarget } from 'rc1-build';
export default definePipeline(({ profile }) => ({
  defaultTargets: ['a'],
  targets: [
    defineTarget({ name: 'a', rule: 'rules/a.ts', inputs: { src: 'src/a.txt' }, outputs: ['out/a.txt'] }),
    defineTarget({ name: 'big', rule: 'rules/big.ts', inputs: {}, outputs: ['out/big.bin'], params: ['big.fill'],
      state: ['.rc1/big-work/', { path: '.rc1/big-paid.db', cache: true }] }),
  ],
}), { profiles: ['dev', 'prod'], defaultProfile: 'dev' });
`;

const A_RULE = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
export default defineRule({ name: 'a', version: 1, async run(ctx) {
  if (process.env.RC1_TEST_COUNTER) fs.appendFileSync(process.env.RC1_TEST_COUNTER, ctx.target + '\\n');
  const text = fs.readFileSync(ctx.inputs('src')[0], 'utf8');
  if (process.env.A_ENTERED) fs.writeFileSync(process.env.A_ENTERED, '');
  await new Promise((r) => setTimeout(r, Number(process.env.SLOW_MS ?? 0)));
  fs.writeFileSync(ctx.output('out/a.txt'), text);
}});
`;

// 100 KiB of one byte (big.fill), and rule state: declared (ctx.state) and its own (ctx.stateDir).
const BIG_RULE = `import { defineRule } from 'rc1-build';
import { z } from 'zod';
import * as fs from 'node:fs';
import * as path from 'node:path';
export default defineRule({ name: 'big', version: 1, params: z.object({ big: z.object({ fill: z.number() }).strict() }), run(ctx) {
  if (process.env.RC1_TEST_COUNTER) fs.appendFileSync(process.env.RC1_TEST_COUNTER, ctx.target + '\\n');
  fs.mkdirSync(ctx.state('.rc1/big-work/'), { recursive: true });
  fs.writeFileSync(path.join(ctx.state('.rc1/big-work'), 'run.txt'), String(ctx.params.big.fill));
  fs.writeFileSync(ctx.state('.rc1/big-paid.db'), 'paid answers');
  fs.writeFileSync(path.join(ctx.stateDir, 'own.txt'), 'mine');
  if (process.env.BIG_UNDECLARED) ctx.state('.rc1/elsewhere.db');
  fs.writeFileSync(ctx.output('out/big.bin'), Buffer.alloc(100 * 1024, ctx.params.big.fill));
}});
`;

function rig(): TestRig {
  return new TestRig({
    'rc1.build.ts': PIPELINE,
    'rules/a.ts': A_RULE,
    'rules/big.ts': BIG_RULE,
    'configs/default.yaml': 'big:\n  fill: 1\n',
    'configs/profiles/prod.yaml': 'big:\n  fill: 9\n',
    'src/a.txt': 'one\n',
  });
}

/** Runs `rc1-build ARGS | READER` in bash; the CLI's exit status and stderr. */
function piped(
  r: TestRig,
  args: string,
  reader: string,
  env: Record<string, string> = {},
): { code: number; stderr: string; stdout: string } {
  const p = spawnSync(
    'bash',
    ['-c', `"${process.execPath}" "${CLI}" ${args} 2>"$ERRF" | ${reader}; echo "rc=\${PIPESTATUS[0]}"`],
    {
      cwd: r.dir,
      encoding: 'utf8',
      env: {
        ...process.env,
        RC1_TEST_COUNTER: r.counter,
        ERRF: path.join(r.dir, '..', `${path.basename(r.dir)}.err`),
        ...env,
      },
    },
  );
  const errFile = path.join(r.dir, '..', `${path.basename(r.dir)}.err`);
  const stderr = fs.readFileSync(errFile, 'utf8');
  fs.rmSync(errFile, { force: true });
  return { code: Number(/rc=(\d+)/.exec(p.stdout)![1]), stderr, stdout: p.stdout };
}

const NO_STACK = /EPIPE|internal error|\n {4}at /; // a stack frame (a diagnostic location is "  at FILE")

test('a reader that closes the pipe ends output quietly: status, -n and a build finish cleanly and release the lock', () => {
  const r = rig();
  try {
    // `true` has exited before the CLI writes: every write meets a closed pipe
    for (const args of ['status', '-n', 'status --json']) {
      const p = piped(r, args, 'true');
      assert.equal(p.code, 0, `${args}: ${p.stderr}`);
      assert.doesNotMatch(p.stderr, NO_STACK, args);
    }
    // a build: head takes the first line and goes; the rule is still running
    const b = piped(r, 'a', 'head -1', { SLOW_MS: '400' });
    assert.match(b.stdout, /a/);
    assert.equal(b.code, 0, b.stderr);
    assert.doesNotMatch(b.stderr, NO_STACK);
    assert.equal(currentHolder(path.join(r.dir, '.rc1/lock')), null, 'the lock was released');
    assert.equal(r.read('out/a.txt'), 'one\n');
    const st = JSON.parse(r.run(['status', '--json']).stdout) as { targets: { name: string; state: string }[] };
    assert.equal(st.targets.find((t) => t.name === 'a')!.state, 'up-to-date');
  } finally {
    r.cleanup();
  }
});

test('watch queues an edit made while a build runs and rebuilds right after it', async () => {
  const r = rig();
  const entered = path.join(r.dir, '..', `${path.basename(r.dir)}.entered`);
  const child = r.spawn(['watch', 'a', '--json'], { SLOW_MS: '2000', A_ENTERED: entered });
  const events = collectEvents<{ event: string; state?: string; queued?: boolean }>(child);
  try {
    for (let i = 0; i < 3000 && !fs.existsSync(entered); i++) await sleep(20);
    assert.ok(fs.existsSync(entered), 'the first build runs the rule');
    r.write('src/a.txt', 'two\n'); // the rule has already read 'one'
    for (let i = 0; i < 3000 && !(r.exists('out/a.txt') && r.read('out/a.txt') === 'two\n'); i++) await sleep(20);
    assert.equal(r.read('out/a.txt'), 'two\n', 'the queued edit was built');
    assert.ok(
      events.some((e) => e.event === 'watch' && e.state === 'rebuilding' && e.queued === true),
      JSON.stringify(events),
    );
    assert.deepEqual(r.runs(), ['a', 'a']);
  } finally {
    child.kill('SIGKILL');
    r.cleanup();
    fs.rmSync(entered, { force: true });
  }
});

test('a rule path typo is a usage error with did-you-mean, for build, status and -n', () => {
  const r = rig();
  try {
    r.write('rc1.build.ts', PIPELINE.replace("rule: 'rules/a.ts'", "rule: 'rules/aa.ts'"));
    for (const args of [['a'], ['status'], ['-n']]) {
      const res = r.run(args);
      assert.equal(res.code, 64, `${args}: ${res.stderr}`);
      assert.match(res.stderr, /rule rules\/aa\.ts of target a does not exist[^]*hint: did you mean rules\/a\.ts\?/);
      assert.doesNotMatch(res.stderr, NO_STACK);
    }
  } finally {
    r.cleanup();
  }
});

const sizeOfCache = (r: TestRig): number => {
  let n = 0;
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(path.join(d, e.name));
      else n += fs.statSync(path.join(d, e.name)).size;
    }
  };
  // What the cap counts: the objects and the entries (which carry small outputs inline).
  for (const sub of ['objects', 'entries']) walk(path.join(r.dir, '.rc1/cache', sub));
  return n;
};

test("the output cache stays under its cap (LRU, after builds and by gc), keeps each profile's current outputs, and says what it freed", () => {
  const r = rig();
  const fill = (n: number): void => r.write('configs/default.yaml', `big:\n  fill: ${n}\n`);
  try {
    for (const n of [1, 2, 3]) {
      fill(n);
      assert.equal(r.run(['big']).code, 0);
    }
    assert.ok(sizeOfCache(r) >= 300 * 1024);
    const gc = r.run(['gc', '--max-size', '250K']);
    assert.equal(gc.code, 0, gc.stderr);
    assert.match(
      gc.stdout,
      // 100 KiB objects, plus the entries (< 1 KiB each)
      /^gc: freed 100 KiB \(1 entry\); the cache holds 20[01] KiB of 250 KiB allowed\n {2}removed big [0-9a-f]{12} \(last used .*, 100 KiB\)/,
    );
    assert.ok(sizeOfCache(r) <= 250 * 1024);
    r.runs();
    fill(2); // the most recently replaced entry was kept: restored
    assert.equal(r.run(['big']).code, 0);
    assert.deepEqual(r.runs(), []);
    fill(1); // the least recently used one was evicted: the rule runs
    assert.equal(r.run(['big']).code, 0);
    assert.deepEqual(r.runs(), ['big']);

    // The cap after a build (RC1_CACHE_MAX_SIZE), and a profile switch: prod's build replaces
    // dev's outputs with a note, and dev's current entry survives a cap that has no room for it.
    const prod = r.run(['big'], { RUN_MODE: 'prod', RC1_CACHE_MAX_SIZE: '150K' });
    assert.equal(prod.code, 0, prod.stderr);
    assert.match(
      prod.stderr,
      /note: 1 target has outputs built in profile dev \(big\); this prod build replaces those it runs/,
    );
    assert.match(
      prod.stderr,
      /the output cache was over its cap \(40[0-2] KiB > 150 KiB\): freed 20[01] KiB, now 20[01] KiB\n {2}removed big [^]* {2}removed big /,
    );
    const st = JSON.parse(r.run(['status', '--json'], { RUN_MODE: 'prod' }).stdout) as {
      targets: { name: string; profile?: string }[];
    };
    assert.equal(st.targets.find((t) => t.name === 'big')!.profile, 'prod');
    r.runs();
    const back = r.run(['big', '--explain']);
    assert.match(back.stdout, /profile prod → dev/);
    assert.deepEqual(r.runs(), [], "dev's outputs were restored from the cache, not rebuilt");
  } finally {
    r.cleanup();
  }
});

test('clean removes declared rule state and names every path it removes or keeps; --cache removes the caches', () => {
  const r = rig();
  try {
    assert.equal(r.run(['big']).code, 0);
    const st = r.run(['status']);
    assert.match(
      st.stdout,
      /\n {5}state: \.rc1\/state\/big \(4 B\), \.rc1\/big-work \(1 B\), \.rc1\/big-paid\.db \(12 B, cache\)\n/,
      st.stdout,
    );
    const js = JSON.parse(r.run(['status', '--json']).stdout) as { targets: { name: string; ruleState?: unknown }[] };
    assert.deepEqual(js.targets.find((t) => t.name === 'big')!.ruleState, [
      { path: '.rc1/state/big', bytes: 4, cache: false },
      { path: '.rc1/big-work', bytes: 1, cache: false },
      { path: '.rc1/big-paid.db', bytes: 12, cache: true },
    ]);
    const undeclared = r.run(['big', '--force'], { BIG_UNDECLARED: '1' });
    assert.equal(undeclared.code, 1);
    assert.match(
      undeclared.stdout,
      /ctx\.state\('\.rc1\/elsewhere\.db'\): not a declared state path of big \(declared: \.rc1\/big-work, \.rc1\/big-paid\.db\)/,
    );
    fs.mkdirSync(path.join(r.dir, '.rc1/stray'));
    // (Written by builds once the manifest's files are old enough to trust their stats; stood in for here.)
    if (!r.exists('.rc1/manifest-state.json')) r.write('.rc1/manifest-state.json', '{}');
    const c = r.run(['clean']);
    assert.equal(c.code, 0, c.stderr);
    assert.match(c.stdout, /removed \.rc1\/big-work \(state of big, /);
    assert.match(c.stdout, /removed \.rc1\/state\/big \(state of big, /);
    assert.match(c.stdout, /kept {4}\.rc1\/big-paid\.db \(cache of big; --cache removes it\)/);
    assert.match(c.stdout, /kept {4}\.rc1\/cache \(the output cache; /);
    assert.match(c.stdout, /left {4}\.rc1\/stray \(declared by no target/);
    assert.doesNotMatch(
      c.stdout,
      /\.rc1\/manifest-state\.json/,
      "the engine's own file is neither removed nor called a stray",
    );
    assert.ok(!r.exists('.rc1/big-work') && r.exists('.rc1/big-paid.db') && !r.exists('out/big.bin'));
    const all = r.run(['clean', '--cache']);
    assert.match(
      all.stdout,
      /removed \.rc1\/big-paid\.db \(cache of big, [^)]*\)\n[^]*removed \.rc1\/cache \(the output cache, /,
    );
    assert.ok(!r.exists('.rc1/big-paid.db') && !r.exists('.rc1/cache'));
  } finally {
    r.cleanup();
  }
});

test("a target may not declare any of the engine's own .rc1/ files as its state, so clean never deletes them", () => {
  const engine = [
    '.rc1/trace.log',
    '.rc1/journal',
    '.rc1/compiled/',
    '.rc1/statcache.json',
    '.rc1/salt',
    '.rc1/manifest-state.json',
    '.rc1/globcache.json',
    '.rc1/server.start.lock.tmp-0a1b2c', // the start lock's temp files: engine-owned by their prefix
  ];
  const r = rig();
  try {
    r.write(
      'rc1.build.ts',
      PIPELINE.replace(
        "state: ['.rc1/big-work/',",
        `state: [${engine.map((e) => `'${e}'`).join(', ')}, '.rc1/big-work/',`,
      ),
    );
    const bad = r.run(['clean']);
    assert.equal(bad.code, 64, bad.stderr);
    for (const e of engine)
      assert.match(
        bad.stderr,
        new RegExp(`target big: state ${e.replace(/\./g, '\\.')} is not a rule's own path under \\.rc1/`),
        e,
      );
    assert.match(bad.stderr, /rc1\.build\.ts:\d+/);
  } finally {
    r.cleanup();
  }
});
