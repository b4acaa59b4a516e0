// --explain and -n name one root cause per rebuilt target and group the cascade under it; early
// cutoff is marked where it stopped the rebuild; -v and --json keep the field-by-field detail.
//   templates/pack_v2/*.json --> render --> items --> score --> summary
//                            \-> count_tpl (template count: unchanged by an edit) -/
//                                    \-> count_users
//   src/other.txt --> other
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TestRig } from '../helpers/rig.ts';

const CONCAT = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
export default defineRule({ name: 'concat', version: 1, run(ctx) {
  if (process.env.RC1_TEST_COUNTER) fs.appendFileSync(process.env.RC1_TEST_COUNTER, ctx.target + '\\n');
  fs.writeFileSync(ctx.output(ctx.outputs[0]), ctx.inputs('src').map((p) => fs.readFileSync(p, 'utf8')).join('') + ctx.target + '\\n');
}});
`;
const COUNT = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
export default defineRule({ name: 'count', version: 1, run(ctx) {
  if (process.env.RC1_TEST_COUNTER) fs.appendFileSync(process.env.RC1_TEST_COUNTER, ctx.target + '\\n');
  fs.writeFileSync(ctx.output(ctx.outputs[0]), String(ctx.inputs('src').length) + '\\n');
}});
`;
const PIPELINE = `import { definePipeline, defineTarget, target } from 'rc1-build';
const t = (name, rule, src) => defineTarget({ name, rule: 'rules/' + rule + '.ts', inputs: { src }, outputs: ['out/' + name + '.txt'] });
export default definePipeline({
  targets: [
    t('render', 'concat', 'templates/pack_v2/*.json'),
    t('items', 'concat', target('render')),
    t('score', 'concat', target('items')),
    t('count_tpl', 'count', 'templates/pack_v2/*.json'),
    t('summary', 'concat', [target('score'), target('count_tpl')]),
    t('count_users', 'concat', target('count_tpl')),
    t('other', 'concat', 'src/other.txt'),
  ],
});
`;

function rig(): TestRig {
  return new TestRig({
    'rc1.build.ts': PIPELINE,
    'rules/concat.ts': CONCAT,
    'rules/count.ts': COUNT,
    'templates/pack_v2/math.json': '{"q": "add"}\n',
    'templates/pack_v2/code.json': '{"q": "sort"}\n',
    'src/other.txt': 'o\n',
  });
}

test('after a template edit, --explain groups the cascade under the edited file and marks where early cutoff stopped it', () => {
  const r = rig();
  try {
    assert.equal(r.run(['-j', '1']).code, 0);
    r.runs();
    r.write('templates/pack_v2/math.json', '{"q": "add two numbers"}\n');
    const b = r.run(['-j', '1', '--explain']);
    assert.equal(b.code, 0, b.stderr);
    assert.deepEqual(r.runs(), ['count_tpl', 'items', 'render', 'score', 'summary']);
    const lines = b.stdout.split('\n');
    // one root per target, the edited file, and the chain that carried it
    assert.ok(
      lines.includes(
        'rc1 explain: render: input templates/pack_v2/math.json changed: ' +
          /math\.json changed: (\S+ → \S+)/.exec(b.stdout)![1],
      ),
    );
    assert.ok(lines.includes('rc1 explain: items: templates/pack_v2/math.json changed (via render)'));
    assert.ok(lines.includes('rc1 explain: score: templates/pack_v2/math.json changed (via render → items)'));
    assert.ok(lines.includes('rc1 explain: summary: templates/pack_v2/math.json changed (via render → items → score)'));
    assert.ok(
      lines.includes(
        'rc1 explain: early cutoff at count_tpl: its outputs are unchanged, so what depends on it stays up to date',
      ),
    );
    assert.ok(lines.includes('rc1 explain: count_users: up-to-date'));
    const group =
      /^rc1 explain: 5 targets ran because templates\/pack_v2\/math\.json changed: (.*); early cutoff at count_tpl$/m.exec(
        b.stdout,
      );
    assert.ok(group, b.stdout);
    assert.deepEqual(group[1]!.split(', ').sort(), ['count_tpl', 'items', 'render', 'score', 'summary']);
    assert.equal(lines.filter((l) => l.includes('because')).length, 1);
    // no per-input hash lines for the cascade without -v
    assert.doesNotMatch(b.stdout, /input out\/render\.txt changed/);

    // the dry run says the same, before anything runs
    r.write('templates/pack_v2/math.json', '{"q": "add"}\n');
    r.write('src/other.txt', 'other edit\n');
    const n = r.run(['-j', '1', '-n']);
    assert.equal(n.code, 0);
    assert.deepEqual(r.runs(), []);
    assert.match(
      n.stdout,
      /\nwould maybe run score \(after items: templates\/pack_v2\/math\.json changed; early cutoff may keep it\)\n/,
    );
    const planned = /\nrc1 explain: 6 targets would run because templates\/pack_v2\/math\.json changed: (.*)\n/.exec(
      n.stdout,
    );
    assert.ok(planned, n.stdout);
    assert.deepEqual(planned[1]!.split(', ').sort(), [
      'count_tpl',
      'count_users',
      'items',
      'render',
      'score',
      'summary',
    ]);
    assert.match(n.stdout, /\nrc1 explain: 1 target would run because src\/other\.txt changed: other\n/);

    // -v: every changed field; --json: the root as data next to the reasons
    const v = r.run(['-j', '1', '--explain', '-v', 'summary']);
    assert.match(v.stdout, /\nrc1 explain: items: input out\/render\.txt changed: [0-9a-f]{12} → [0-9a-f]{12}\n/);
    r.write('templates/pack_v2/math.json', '{"q": "add again"}\n');
    const j = r.run(['-j', '1', '--json']);
    const ex = j.events.filter((e) => e.event === 'explain' && e.target === 'score')[0] as {
      reasons: string[];
      root: { label: string; at: string; via: string[]; reason: { kind: string; path: string } };
    };
    assert.deepEqual(
      [ex.root.label, ex.root.at, ex.root.via, ex.root.reason.kind, ex.root.reason.path],
      [
        'templates/pack_v2/math.json changed',
        'render',
        ['render', 'items'],
        'input-changed',
        'templates/pack_v2/math.json',
      ],
    );
    assert.match(ex.reasons[0]!, /^input out\/items\.txt changed: /);
    const cut = j.events.find((e) => e.event === 'done' && e.target === 'count_tpl') as { unchanged?: boolean };
    assert.equal(cut.unchanged, true);
  } finally {
    r.cleanup();
  }
});

test('a param (that the rule ignores) and a source changed at once: each root is grouped apart, and the param stops at early cutoff', () => {
  const r = new TestRig({
    'rc1.build.ts': PIPELINE.replace(
      "t('items', 'concat', target('render')),",
      "defineTarget({ name: 'items', rule: 'rules/concat.ts', inputs: { src: target('render') }, outputs: ['out/items.txt'], params: ['items.n'] }),",
    ),
    'rules/concat.ts': CONCAT,
    'rules/count.ts': COUNT,
    'configs/default.yaml': 'items:\n  n: 1\n',
    'templates/pack_v2/math.json': '{"q": "add"}\n',
    'templates/pack_v2/code.json': '{"q": "sort"}\n',
    'src/other.txt': 'o\n',
  });
  try {
    assert.equal(r.run(['-j', '1']).code, 0);
    r.write('configs/default.yaml', 'items:\n  n: 2\n');
    r.write('src/other.txt', 'changed\n');
    const b = r.run(['-j', '1', '--explain']);
    assert.equal(b.code, 0, b.stderr);
    assert.match(b.stdout, /\nrc1 explain: items: param items\.n changed: 1 → 2\n/);
    assert.match(
      b.stdout,
      /\nrc1 explain: 1 target ran because param items\.n changed: 1 → 2: items; early cutoff at items\n/,
    );
    assert.match(b.stdout, /\nrc1 explain: score: up-to-date\n/);
    assert.match(b.stdout, /\nrc1 explain: 1 target ran because src\/other\.txt changed: other\n/);
  } finally {
    r.cleanup();
  }
});
