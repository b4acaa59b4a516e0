// diversity_report: the shipped pack_v2 passes against pack_v1; a pack with 3 roles, one with 5
// math templates, and a copy of v1 fail the checks they should. The last test drives the real
// CLI in a temp workspace (test/helpers/rig.ts): exit 2 and the failing check's hint printed.
import assert from 'node:assert/strict';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { test } from 'node:test';
import type { Check, RuleResult } from '../../packages/engine/src/api/index.ts';
import { REPO, TestRig } from '../helpers/rig.ts';
import { config, PACK_V1, PACK_V2, runRule, TMP } from '../fixtures/pool/harness.ts';

let copies = 0;
/** A copy of pack_v2 with one file's JSON edited; returns the copy's file paths. */
function v2With(file: string, edit: (json: any) => void): string[] {
  const dir = join(TMP, `pack-${++copies}`);
  cpSync(join(REPO, 'templates/pack_v2'), dir, { recursive: true });
  const path = join(dir, file);
  const json = JSON.parse(readFileSync(path, 'utf8'));
  edit(json);
  writeFileSync(path, JSON.stringify(json));
  return PACK_V2.map((p) => join(dir, basename(p)));
}

async function report(
  v2: string[],
  templates = config('templates'),
  v1 = PACK_V1,
): Promise<{ checks: Map<string, Check>; report: Record<string, any>; summary: string }> {
  const r = await runRule('diversity_report', {
    params: { templates, diversity: config('diversity') },
    inputs: { v1, v2 },
    outputs: ['reports/diversity_report.json'],
  });
  const res = r.result as RuleResult;
  return { checks: new Map(res.checks!.map((c) => [c.name, c])), report: res.report!, summary: res.summary! };
}
const failing = (checks: Map<string, Check>): string[] =>
  [...checks.values()]
    .filter((c) => !c.pass)
    .map((c) => c.name)
    .sort();

test('the shipped pack_v2 passes diversity_report against pack_v1, and the report carries the definitions', async () => {
  const { checks, report: r } = await report(PACK_V2);
  assert.deepEqual(failing(checks), []);
  assert.deepEqual(
    [...checks.keys()],
    [
      'distinct_2',
      'kl3_v2_vs_v1',
      'roles',
      'styles',
      'templates_math',
      'templates_multihop',
      'templates_yesno',
      'templates_clarify',
    ],
  );
  assert.ok(
    [...checks.values()].every((c) => c.hint),
    'every check has a hint',
  );
  assert.ok(r.v2.stats.distinct_2.mean > r.v1.stats.distinct_2.mean);
  assert.ok(r.kl.v2_vs_v1 > 5 * r.kl.noise_floor, 'the KL is well above what re-sampling v2 alone gives');
  assert.equal(r.v2.stats.documents, config<{ renderings: number }>('diversity').renderings);
  for (const k of ['tokenization', 'distinct_n', 'ttr', 'kl', 'zipf_slope', 'coverage', 'rendering'])
    assert.ok(r.definitions[k], k);
});

test('a pack with 3 roles fails the roles check of diversity_report, with its hint', async () => {
  const { checks } = await report(
    v2With('roles.json', (j) => {
      j.roles = j.roles.slice(0, 3);
    }),
  );
  assert.deepEqual(failing(checks), ['roles']);
  assert.equal(checks.get('roles')!.value, 3);
  assert.match(checks.get('roles')!.hint!, /roles\.json/);
});

test('a pack with 5 math templates fails the templates_math check', async () => {
  const { checks } = await report(
    v2With('templates_math.json', (j) => {
      j.templates = j.templates.slice(0, 5);
    }),
  );
  assert.deepEqual(failing(checks), ['templates_math']);
  assert.equal(checks.get('templates_math')!.value, 5);
});

test('pack_v1 offered as v2 fails the KL, distinct-2, roles, styles and template-count checks', async () => {
  const { checks } = await report(PACK_V1, { ...config('templates'), pack: 'pack_v1' });
  assert.ok((checks.get('kl3_v2_vs_v1')!.value as number) < 0.05);
  assert.deepEqual(failing(checks), [
    'distinct_2',
    'kl3_v2_vs_v1',
    'roles',
    'styles',
    'templates_clarify',
    'templates_math',
    'templates_multihop',
    'templates_yesno',
  ]);
});

test('through the CLI, a 3-role pack fails the diversity_report gate with exit 2 and prints the hint', () => {
  const rig = new TestRig({
    'rc1.build.ts': `import { definePipeline, defineGate } from 'rc1-build';
export default definePipeline({ defaultTargets: ['diversity_report'], freeFormConfig: ['pool', 'validation'], targets: [
  defineGate({ name: 'diversity_report', rule: 'rules/diversity_report.ts',
    inputs: { v1: 'templates/pack_v1/*.json', v2: 'templates/pack_v2/*.json' },
    outputs: ['reports/diversity_report.json'], report: 'reports/diversity_report.json', params: ['templates', 'diversity'] }),
] });
`,
  }).withRc1Lib();
  try {
    for (const p of ['lib', 'rules/diversity_report.ts', 'templates', 'configs/pool.yaml'])
      cpSync(join(REPO, p), join(rig.dir, p), { recursive: true });
    const ok = rig.run(['diversity_report']);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /gate\s+diversity_report ok: 8 passed ·/);
    const roles = JSON.parse(rig.read('templates/pack_v2/roles.json'));
    roles.roles = roles.roles.slice(0, 3);
    rig.write('templates/pack_v2/roles.json', JSON.stringify(roles));
    const r = rig.run(['diversity_report']);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stdout, /GATE FAILED diversity_report/);
    assert.match(r.stdout, /roles\s+3\s+>=\s+4\s+FAIL\n\s+hint: add roles to templates\/pack_v2\/roles\.json/);
    const written = JSON.parse(rig.read('reports/diversity_report.json'));
    assert.equal(written.pass, false);
    assert.ok(written.definitions.distinct_n);
  } finally {
    rig.cleanup();
  }
});
