// Template packs as data (lib/templates): the shipped packs load, a bad pack file is an error
// naming the file and the field, and rendering names the template and the slot it cannot fill.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { test } from 'node:test';
import { createRng } from '../../packages/engine/src/api/index.ts';
import {
  fillSlots,
  loadPack,
  parsePack,
  renderPackSample,
  renderTemplate,
  type PackSource,
  type TemplateDef,
} from '../../lib/templates/index.ts';
import { PACK_V1, PACK_V2, ROOT } from '../fixtures/pool/harness.ts';

const sources = (paths: string[]): PackSource[] =>
  paths.map((p) => ({ file: `pack/${basename(p)}`, text: readFileSync(p, 'utf8') }));
/** The v2 pack's sources with one file's JSON changed by `edit`. */
function v2With(file: string, edit: (json: any) => void): PackSource[] {
  return sources(PACK_V2).map((s) => {
    if (s.file !== `pack/${file}`) return s;
    const json = JSON.parse(s.text);
    edit(json);
    return { ...s, text: JSON.stringify(json) };
  });
}

test('the shipped packs load: v2 has ≥ 6 templates per category, ≥ 4 roles and ≥ 3 styles; v1 is one plain style', async () => {
  const v2 = await loadPack(PACK_V2, ROOT);
  assert.equal(v2.name, 'pack_v2');
  assert.deepEqual(v2.categories, { gsm8k: 'math', hotpotqa: 'multihop', strategyqa: 'yesno' });
  for (const c of ['math', 'multihop', 'yesno', 'clarify']) assert.ok(v2.templatesByCategory[c]!.length >= 6, c);
  assert.ok(v2.roles.length >= 4 && v2.styles.length >= 3);
  assert.ok(v2.files.every((f) => f.startsWith('templates/pack_v2/')));
  const v1 = await loadPack(PACK_V1, ROOT);
  assert.deepEqual(
    v1.styles.map((s) => s.id),
    ['plain'],
  );
  assert.ok(v1.templates.length < v2.templates.length);
});

test('a pack loads the same whatever order its files are given in', () => {
  assert.deepEqual(parsePack(sources(PACK_V2)), parsePack(sources([...PACK_V2].reverse())));
});

test('an unknown key in a pack file is an error naming the file and the field', () => {
  assert.throws(
    () =>
      parsePack(
        v2With('roles.json', (j) => {
          j.roles[2].nickname = 'x';
        }),
      ),
    { name: 'PackError', message: /^pack\/roles\.json: roles\[2\]: unknown key "nickname"/ },
  );
});

test('a mistyped field is an error naming the file and the field path', () => {
  assert.throws(
    () =>
      parsePack(
        v2With('styles.json', (j) => {
          j.styles[1].directives = 'be brief';
        }),
      ),
    { name: 'PackError', message: /^pack\/styles\.json: styles\[1\]\.directives: / },
  );
  assert.throws(
    () =>
      parsePack(
        v2With('pack.json', (j) => {
          delete j.gaps.term;
        }),
      ),
    { name: 'PackError', message: /^pack\/pack\.json: gaps\.term: / },
  );
  assert.throws(() => parsePack([{ file: 'pack/bad.json', text: '{ nope' }, ...sources(PACK_V2)]), {
    name: 'PackError',
    message: /^pack\/bad\.json: \(file\): invalid JSON/,
  });
});

test('a template whose declared slots differ from the slots it uses is an error at load', () => {
  assert.throws(
    () =>
      parsePack(
        v2With('templates_math.json', (j) => {
          j.templates[1].slots = ['persona', 'question', 'style', 'tool_hint'];
        }),
      ),
    {
      name: 'PackError',
      message:
        /^pack\/templates_math\.json: templates\[1\]: template math\.practice_sheet: declares slot \{tool_hint\}, which none of its turns uses/,
    },
  );
  assert.throws(
    () =>
      parsePack(
        v2With('templates_math.json', (j) => {
          j.templates[0].turns[0] += ' {mood}';
        }),
      ),
    { name: 'PackError', message: /templates\[0\]: template math\.kitchen_table: unknown slot \{mood\}/ },
  );
  assert.throws(
    () =>
      parsePack(
        v2With('templates_math.json', (j) => {
          j.templates[0].slots.push('style');
        }),
      ),
    { name: 'PackError', message: /templates\[0\]: template math\.kitchen_table: declares slot \{style\} twice/ },
  );
  assert.throws(
    () =>
      parsePack(
        v2With('templates_yesno.json', (j) => {
          j.templates[0].slots = ['persona', 'question', 'style'];
        }),
      ),
    {
      name: 'PackError',
      message: /template yesno\.sibling_argument: uses slot \{tool_hint\}, which it does not declare/,
    },
  );
});

test('pack cross-checks: duplicate ids, replies that reveal nothing, categories without templates', () => {
  assert.throws(
    () =>
      parsePack(
        v2With('styles.json', (j) => {
          j.styles[1].id = j.styles[0].id;
        }),
      ),
    {
      name: 'PackError',
      message: /^pack\/styles\.json: styles\[1\]\.id: style id "casual" is already defined in pack\/styles\.json/,
    },
  );
  assert.throws(
    () =>
      parsePack(
        v2With('pack.json', (j) => {
          j.gaps.number.replies[0] = 'Sorry, I forgot.';
        }),
      ),
    { name: 'PackError', message: /^pack\/pack\.json: gaps\.number\.replies\[0\]: reply: must use \{detail\}/ },
  );
  assert.throws(
    () =>
      parsePack(
        v2With('pack.json', (j) => {
          j.categories.strategyqa = 'trivia';
        }),
      ),
    {
      name: 'PackError',
      message:
        'pack/templates_yesno.json: category: "yesno" is not a category the pack file names (math, multihop, trivia, clarify)',
    },
  );
  assert.throws(() => parsePack(sources(PACK_V2).filter((s) => !s.file.endsWith('pack.json'))), {
    name: 'PackError',
    message: /no file of kind "pack"/,
  });
});

test('rendering with a missing slot value is an error naming the template and the slot', () => {
  const t: TemplateDef = {
    id: 'math.demo',
    slots: ['persona', 'question', 'style'],
    turns: ['{persona} {question} {style}'],
  };
  assert.throws(() => renderTemplate(t, { persona: 'I am a tester.', style: 'Be brief.' }), {
    name: 'TemplateError',
    message: 'template math.demo: slot {question} has no value',
  });
  assert.deepEqual(renderTemplate(t, { persona: 'I am a tester.', question: 'What is 2 + 2?', style: 'Be brief.' }), [
    'I am a tester. What is 2 + 2? Be brief.',
  ]);
});

test('rendering a template that uses an unknown or undeclared slot is an error naming the template and the slot', () => {
  const unknown: TemplateDef = {
    id: 'x.unknown',
    slots: ['persona', 'question', 'style'],
    turns: ['{persona} {question} {style} {mood}'],
  };
  assert.throws(() => renderTemplate(unknown, { persona: 'p', question: 'q', style: 's' }), {
    name: 'TemplateError',
    message: /^template x\.unknown: unknown slot \{mood\}/,
  });
  const undeclared: TemplateDef = {
    id: 'x.undeclared',
    slots: ['persona', 'question', 'style'],
    turns: ['{persona} {question} {tool_hint} {style}'],
  };
  assert.throws(() => renderTemplate(undeclared, { persona: 'p', question: 'q', style: 's', tool_hint: 't' }), {
    name: 'TemplateError',
    message: /^template x\.undeclared: uses slot \{tool_hint\}/,
  });
  const stray: TemplateDef = {
    id: 'x.stray',
    slots: ['persona', 'question', 'style'],
    turns: ['{persona} {question} {style} }'],
  };
  assert.throws(() => renderTemplate(stray, { persona: 'p', question: 'q', style: 's' }), {
    name: 'TemplateError',
    message: /^template x\.stray: unbalanced brace/,
  });
});

test('filling collapses runs of spaces and tabs, trims every line and the text, and keeps at most one blank line; text already tidy comes back as it is', () => {
  // The definition, as written before tidy() got its fast path for text that needs no change.
  const tidy = (text: string): string =>
    text
      .split('\n')
      .map((l) => l.replace(/[ \t]+/g, ' ').trim())
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trim();
  const alphabet = [
    'a',
    'b',
    ' ',
    ' ',
    '\n',
    '\t',
    '\r',
    '\u00a0',
    '\u2028',
    '\u3000',
    '\ufeff',
    '\u0085',
    '\u000b',
    'é',
  ];
  const rng = createRng(7);
  for (let i = 0; i < 20000; i++) {
    let text = '';
    const len = rng.int(12);
    for (let j = 0; j < len; j++) text += alphabet[rng.int(alphabet.length)];
    assert.equal(fillSlots(text, {}, [], 'test'), tidy(text), JSON.stringify(text));
    assert.equal(fillSlots(`x{v}y`, { v: text }, ['v'], 'test'), tidy(`x${text}y`), JSON.stringify(text));
  }
  assert.equal(fillSlots('  a \t b\n\n\n\nc  ', {}, [], 'test'), 'a b\n\nc');
  assert.equal(fillSlots('a b\n\nc', {}, [], 'test'), 'a b\n\nc');
});

test('a template changed after it rendered is checked again at its next rendering', () => {
  const t: TemplateDef = { id: 'math.changed', slots: ['persona', 'question'], turns: ['{persona} {question}'] };
  assert.deepEqual(renderTemplate(t, { persona: 'P.', question: 'Q?' }), ['P. Q?']);
  t.turns = ['{persona} {question} {style}'];
  assert.throws(() => renderTemplate(t, { persona: 'P.', question: 'Q?', style: 'S.' }), {
    name: 'TemplateError',
    message: /^template math\.changed: uses slot \{style\}/,
  });
  (t.turns as string[])[0] = '{persona} {question} }';
  assert.throws(() => renderTemplate(t, { persona: 'P.', question: 'Q?' }), {
    name: 'TemplateError',
    message: /^template math\.changed: unbalanced brace/,
  });
});

test('a pack rendering deals every template, role and style, and leaves the question out of the text', async () => {
  const v2 = await loadPack(PACK_V2, ROOT);
  const r = renderPackSample(v2, v2.templates.length, createRng(1));
  assert.deepEqual(new Set(r.templates), new Set(v2.templates.map((t) => t.id)));
  assert.deepEqual(new Set(r.roles), new Set(v2.roles.map((x) => x.id)));
  assert.deepEqual(new Set(r.styles), new Set(v2.styles.map((x) => x.id)));
  assert.ok(r.docs.every((d) => d.length >= 1 && d.every((seg) => seg.length > 0)));
  assert.deepEqual(
    renderPackSample(v2, 40, createRng(9)),
    renderPackSample(v2, 40, createRng(9)),
    'same seed, same rendering',
  );
});
