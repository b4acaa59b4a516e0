// codeHash (hash/fingerprint.ts) is remembered per closure object and rule: the remembered value
// must be the one computed afresh, and two rules that share a closure object keep their own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { codeHash } from '../../packages/engine/src/hash/fingerprint.ts';
import { sha256Hex } from '../../packages/engine/src/hash/hash-file.ts';
import { canonicalJson } from '../../packages/engine/src/util/canonical-json.ts';

const fresh = (rule: string, code: Record<string, string>): string => sha256Hex(canonicalJson({ rule, code }));

test('codeHash is the sha256 of the canonical {rule, code}, asked once or many times', () => {
  const code = { 'rules/a.ts': 'aa', 'lib/x.ts': 'bb' };
  for (let i = 0; i < 3; i++) assert.equal(codeHash({ rule: 'rules/a.ts', code }), fresh('rules/a.ts', code));
  // a second rule with the very same closure object has its own hash
  assert.equal(codeHash({ rule: 'rules/b.ts', code }), fresh('rules/b.ts', code));
  assert.notEqual(codeHash({ rule: 'rules/b.ts', code }), codeHash({ rule: 'rules/a.ts', code }));
  // an equal closure in another object: the same hash; another closure: another hash
  assert.equal(codeHash({ rule: 'rules/a.ts', code: { ...code } }), fresh('rules/a.ts', code));
  const other = { ...code, 'lib/x.ts': 'cc' };
  assert.equal(codeHash({ rule: 'rules/a.ts', code: other }), fresh('rules/a.ts', other));
});
