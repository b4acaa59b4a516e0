// configs/*.yaml parsing: syntax and duplicate-key errors at their real line and column, alias
// limits as usage errors, and loading time that grows linearly with the number of keys.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseYamlFile } from '../../packages/engine/src/config/parse-yaml.ts';
import type { Diagnostic } from '../../packages/engine/src/config/usage-error.ts';

function usageError(text: string): Diagnostic {
  const r = parseYamlFile('configs/x.yaml', text);
  assert.ok(!r.ok, 'expected a usage error');
  return r.diagnostic;
}

function value(text: string): unknown {
  const r = parseYamlFile('c.yaml', text);
  assert.ok(r.ok, r.ok ? '' : r.diagnostic.headline);
  return r.value;
}

test('a YAML syntax error is reported at its line and column, not 1:1', () => {
  const d = usageError('a: 1\ncopy:\n  suffix: "!"\n bad: 2\n');
  assert.match(d.headline, /invalid YAML in configs\/x\.yaml: All mapping items must start at the same column/);
  assert.equal(d.location, 'configs/x.yaml:4:1');
});

test('a duplicate key is reported where it repeats, naming where it was first set', () => {
  const d = usageError('a: 1\nshadow:\n  n: 2\n  seed: 3\n  n: 4\n');
  assert.equal(d.headline, 'duplicate key n in configs/x.yaml');
  assert.equal(d.location, 'configs/x.yaml:5:3');
  assert.equal(d.context?.['first set at'], 'configs/x.yaml:3:3');
});

test('the same key in two different mappings is not a duplicate', () => {
  assert.deepEqual(value('a:\n  n: 1\nb:\n  n: 2\n'), { a: { n: 1 }, b: { n: 2 } });
});

test('an alias bomb is a usage error at the first alias, not an internal error', () => {
  const bomb =
    'a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n';
  const d = usageError(bomb);
  assert.match(d.headline, /aliases expand to more than 100 copies/);
  assert.equal(d.location, 'configs/x.yaml:2:8');
});

test('more than 100 plain aliases is a usage error at the 101st', () => {
  const d = usageError('a: &a 1\n' + Array.from({ length: 200 }, (_, i) => `k${i}: *a`).join('\n') + '\n');
  assert.match(d.headline, /uses more than 100 YAML aliases/);
  assert.equal(d.location, 'configs/x.yaml:102:7');
});

test('a few aliases are fine', () => {
  assert.deepEqual(value('a: &a { n: 1 }\nb: *a\n'), { a: { n: 1 }, b: { n: 1 } });
});

test('40 000 keys in one mapping parse in linear time (generous bound: under 4 s on a loaded 2-core machine)', () => {
  const text = Array.from({ length: 40_000 }, (_, i) => `k${i}: ${i}`).join('\n') + '\n';
  const t0 = performance.now();
  const v = value(text) as Record<string, number>;
  const ms = performance.now() - t0;
  assert.equal(v.k39999, 39999);
  assert.ok(ms < 4000, `took ${ms.toFixed(0)} ms (the quadratic duplicate check took ~10 s here)`);
});
