// The kill loop: 32 builds SIGKILLed at random moments — half of them inside the commit window
// (RC1_FAULT_COMMIT_PAUSE_MS stretches it; the kill lands while .rc1/journal holds the commit) —
// with the input edited and reverted between kills, each followed by a recovering build and an
// audit. Every recovery must build cleanly, leave every output byte-identical to a clean build of
// the same input, and audit clean.
//   src/v.txt --> pair (out/p1.txt, out/p2.txt, out/dir/) --> chain (out/c.txt)
//   src/s.txt --> solo (out/s.txt)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { hashFileSync } from '../../packages/engine/src/hash/hash-file.ts';
import { listFilesRecursive } from '../../packages/engine/src/util/fs.ts';
import { TestRig } from '../helpers/rig.ts';

const PIPELINE = `import { definePipeline, defineTarget, target } from 'rc1-build';
export default definePipeline({
  defaultTargets: ['chain', 'solo'],
  targets: [
    defineTarget({ name: 'pair', rule: 'rules/pair.ts', inputs: { v: 'src/v.txt' }, outputs: ['out/p1.txt', 'out/p2.txt', 'out/dir/'] }),
    defineTarget({ name: 'chain', rule: 'rules/chain.ts', inputs: { p: target('pair') }, outputs: ['out/c.txt'] }),
    defineTarget({ name: 'solo', rule: 'rules/solo.ts', inputs: { s: 'src/s.txt' }, outputs: ['out/s.txt'] }),
  ],
});
`;

const PAIR = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
import * as path from 'node:path';
export default defineRule({ name: 'pair', version: 1, async run(ctx) {
  const v = fs.readFileSync(ctx.inputs('v')[0], 'utf8').trim();
  const pad = v.repeat(64 * 1024);
  ctx.log('pair ' + v);
  fs.writeFileSync(ctx.output('out/p1.txt'), v + '\\n' + pad);
  const dir = ctx.output('out/dir');
  fs.mkdirSync(path.join(dir, 'sub'));
  for (let i = 0; i < 3; i++) fs.writeFileSync(path.join(dir, 'sub', 'f' + i + '.txt'), v + i + '\\n' + pad);
  fs.symlinkSync('sub/f2.txt', path.join(dir, 'latest'));
  fs.writeFileSync(ctx.output('out/p2.txt'), v + '\\n');
}});
`;

const CHAIN = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
export default defineRule({ name: 'chain', version: 1, run(ctx) {
  const vs = ctx.inputs('p').filter((p) => p.endsWith('.txt')).map((p) => fs.readFileSync(p, 'utf8').split('\\n')[0]);
  fs.writeFileSync(ctx.output('out/c.txt'), vs.join(',') + '\\n');
}});
`;

const SOLO = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
export default defineRule({ name: 'solo', version: 1, run(ctx) {
  fs.writeFileSync(ctx.output('out/s.txt'), fs.readFileSync(ctx.inputs('s')[0], 'utf8').toUpperCase());
}});
`;

const VERSIONS = ['alpha', 'beta', 'gamma'];

function rig(): TestRig {
  return new TestRig({
    'rc1.build.ts': PIPELINE,
    'rules/pair.ts': PAIR,
    'rules/chain.ts': CHAIN,
    'rules/solo.ts': SOLO,
    'src/v.txt': 'alpha\n',
    'src/s.txt': 'alpha\n',
  });
}

/** Every output file (and link) under out/, path → sha256 or link target. */
function snapshot(r: TestRig): Record<string, string> {
  const out: Record<string, string> = {};
  const root = path.join(r.dir, 'out');
  for (const f of listFilesRecursive(root)) out[f] = hashFileSync(path.join(root, f));
  out['dir/latest'] = `link:${fs.readlinkSync(path.join(root, 'dir/latest'))}`;
  return out;
}

test('32 SIGKILLs, half inside the commit window, with edits and reverts: every recovery builds, matches a clean build and audits clean', async () => {
  // Reference: a clean build of each input version, in its own workspace.
  const reference = new Map<string, Record<string, string>>();
  for (const v of VERSIONS) {
    const clean = rig();
    try {
      clean.write('src/v.txt', `${v}\n`);
      clean.write('src/s.txt', `${v}\n`);
      const b = clean.run([]);
      assert.equal(b.code, 0, b.stderr);
      reference.set(v, snapshot(clean));
    } finally {
      clean.cleanup();
    }
  }
  const r = rig();
  try {
    let seed = 20261126;
    const rand = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const journal = path.join(r.dir, '.rc1/journal');
    let inCommit = 0;
    let restores = 0;
    for (let i = 1; i <= 32; i++) {
      // Edits and reverts: the versions cycle, so earlier fingerprints come back (restores).
      const v = VERSIONS[Math.floor(rand() * VERSIONS.length)]!;
      const s = VERSIONS[(i + Math.floor(rand() * 2)) % VERSIONS.length]!;
      r.write('src/v.txt', `${v}\n`);
      r.write('src/s.txt', `${s}\n`);
      const commitWindow = i % 2 === 0;
      const child = r.spawn(['-j', '2'], commitWindow ? { RC1_FAULT_COMMIT_PAUSE_MS: '150' } : {});
      const exited = new Promise((res) => child.on('exit', res));
      if (commitWindow) {
        const t0 = Date.now();
        while (Date.now() - t0 < 10_000 && child.exitCode === null) {
          if (fs.existsSync(journal) && fs.readdirSync(journal).some((n) => n.endsWith('.json'))) break;
          await sleep(2);
        }
        await sleep(Math.floor(rand() * 80));
        if (fs.existsSync(journal) && fs.readdirSync(journal).some((n) => n.endsWith('.json'))) inCommit++;
      } else {
        await sleep(30 + Math.floor(rand() * 300));
      }
      child.kill('SIGKILL');
      await exited;
      const b = r.run(['--json']);
      assert.equal(b.code, 0, `round ${i}: the recovering build failed:\n${b.stdout}\n${b.stderr}`);
      restores += b.events.filter((e) => e.event === 'restore').length;
      const want = reference.get(v)!;
      const got = snapshot(r);
      for (const [f, sha] of Object.entries(want)) {
        if (f === 's.txt') continue;
        assert.equal(got[f], sha, `round ${i}: out/${f} differs from a clean build of ${v}`);
      }
      assert.equal(
        got['s.txt'],
        reference.get(s)!['s.txt'],
        `round ${i}: out/s.txt differs from a clean build of ${s}`,
      );
      const a = r.run(['audit']);
      assert.equal(a.code, 0, `round ${i}: audit after recovery:\n${a.stdout}${a.stderr}`);
    }
    assert.ok(inCommit >= 10, `only ${inCommit} kills landed inside the commit window`);
    assert.ok(restores > 0, 'reverts restored from the cache');
    const noop = r.run(['--json']);
    assert.ok(
      noop.events.every((e) => e.event !== 'start' && e.event !== 'restore'),
      'the final build is a no-op',
    );
  } finally {
    r.cleanup();
  }
});
