// Every document a source file, config or doc names is in the repository: a reference to
// docs/<file>.md (or to a markdown file by a relative link) must resolve, and nothing cites the
// planning documents that live outside it (RC1.md, DESIGN.md, STYLE.md, seeds/…).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO } from '../helpers/rig.ts';

const TEXT = /\.(ts|mjs|cjs|js|py|sh|md|yaml|yml|json)$/;
const files = execFileSync('git', ['ls-files'], { cwd: REPO, encoding: 'utf8' })
  .split('\n')
  .filter(
    (f) =>
      TEXT.test(f) &&
      !f.startsWith('data/') &&
      !f.startsWith('test/fixtures/') &&
      f !== 'package-lock.json' &&
      fs.existsSync(path.join(REPO, f)),
  );

test('no tracked file cites a planning document that is not in the repository', () => {
  const bad: string[] = [];
  for (const f of files) {
    if (f === 'test/unit/doc-references.test.ts') continue;
    fs.readFileSync(path.join(REPO, f), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (/(?<![\w/])(RC1|DESIGN|STYLE)\.md\b|(?<![\w/])seeds\/0\d\d/.test(line))
          bad.push(`${f}:${i + 1}: ${line.trim().slice(0, 120)}`);
      });
  }
  assert.deepEqual(bad, [], 'cite docs/rc1.md or docs/design.md instead');
});

test('every docs/….md a file names exists, and every relative markdown link in docs/ and the READMEs resolves', () => {
  const missing: string[] = [];
  for (const f of files) {
    const text = fs.readFileSync(path.join(REPO, f), 'utf8');
    for (const m of text.matchAll(/(?<![\w/.-])docs\/[\w./-]+\.md/g)) {
      if (!fs.existsSync(path.join(REPO, m[0]))) missing.push(`${f}: ${m[0]}`);
    }
    if (f.endsWith('.md')) {
      for (const m of text.matchAll(/\]\(((?!https?:|#|mailto:)[^)\s#]+)(#[^)]*)?\)/g)) {
        if (!fs.existsSync(path.resolve(path.dirname(path.join(REPO, f)), m[1]!))) missing.push(`${f}: (${m[1]})`);
      }
    }
  }
  assert.deepEqual(missing, []);
});
