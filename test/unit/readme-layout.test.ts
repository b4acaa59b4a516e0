// The README's layout tree (its "## Layout" section) matches the repository: every path it names
// exists, every tracked top-level folder and every folder of the engine's src/ is named in it, and
// it stays short enough to read at a glance.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO } from '../helpers/rig.ts';

/** The lines of the code block that follows the README's "## Layout" heading. */
function layoutBlock(readme: string): string[] {
  const at = readme.indexOf('\n## Layout\n');
  assert.ok(at >= 0, 'README.md has a "## Layout" section');
  const open = readme.indexOf('\n```\n', at);
  const close = readme.indexOf('\n```\n', open + 4);
  assert.ok(open >= 0 && close > open, 'the Layout section holds a code block');
  return readme.slice(open + 5, close).split('\n');
}

/** `src/{a,b}/` → `src/a/`, `src/b/`. */
function expand(name: string): string[] {
  const m = /^(.*)\{([^}]*)\}(.*)$/.exec(name);
  return m ? m[2]!.split(',').flatMap((x) => expand(`${m[1]}${x}${m[3]}`)) : [name];
}

/**
 * The paths the tree names, relative to the repository: the first column of each line (names
 * separated by single spaces, up to the first run of two spaces); an indented line's names are
 * inside the folder of the unindented line above it.
 */
function namedPaths(lines: readonly string[]): string[] {
  const out: string[] = [];
  let parent = '';
  for (const line of lines) {
    const indented = line.startsWith('  ');
    const column = line.trim().split(/\s{2,}/)[0]!;
    const names = column.split(' ').flatMap(expand);
    if (!indented) parent = names[0]!.endsWith('/') ? names[0]! : '';
    for (const n of names) out.push(path.posix.normalize(indented ? `${parent}${n}` : n).replace(/\/$/, ''));
  }
  return out;
}

const lines = layoutBlock(fs.readFileSync(path.join(REPO, 'README.md'), 'utf8'));
const named = new Set(namedPaths(lines));

test('the README layout tree is at most a dozen lines', () => {
  assert.ok(lines.length <= 12, `${lines.length} lines`);
});

test('every path the README layout tree names exists in the repository', () => {
  const missing = [...named].filter((p) => !fs.existsSync(path.join(REPO, p)));
  assert.deepEqual(missing, []);
});

/** The tracked top-level folders and the folders of the engine's src/ that a set of named paths leaves out. */
function unnamedFolders(named: ReadonlySet<string>): string[] {
  const tracked = execFileSync('git', ['ls-files'], { cwd: REPO, encoding: 'utf8' }).split('\n').filter(Boolean);
  const top = new Set(tracked.filter((f) => f.includes('/') && !f.startsWith('.')).map((f) => f.split('/')[0]!));
  // data/ is named by the one folder of it that is tracked source (data/raw/).
  const unnamed = [...top].filter((d) => !named.has(d) && ![...named].some((p) => p.startsWith(`${d}/`)));
  const src = fs
    .readdirSync(path.join(REPO, 'packages/engine/src'), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => `packages/engine/src/${e.name}`)
    .filter((d) => !named.has(d));
  return [...unnamed, ...src].sort();
}

test("every tracked top-level folder and every folder of the engine's src/ is named in the README layout tree", () => {
  assert.deepEqual(unnamedFolders(named), []);
});

test('a tree without a folder line, or without a src/ folder, is found out (the check can fail)', () => {
  const noScripts = namedPaths(lines.filter((l) => !l.startsWith('scripts/')));
  assert.deepEqual(unnamedFolders(new Set(noScripts)), ['scripts']);
  const noScheduler = namedPaths(lines.map((l) => l.replace('scheduler,', '')));
  assert.deepEqual(unnamedFolders(new Set(noScheduler)), ['packages/engine/src/scheduler']);
});
