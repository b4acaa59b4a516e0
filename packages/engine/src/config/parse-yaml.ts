// Parses one configs/*.yaml file into plain values, in time linear in its size, with every error a
// UsageError at its real file:line:col: syntax errors, duplicate keys (checked here with one Set
// per mapping: the yaml package's own uniqueKeys check compares every key with every earlier one,
// which made a 40 000-key file take ~10 s), and too many or too deeply expanded aliases (an
// "alias bomb"). Loaded only when a config file changed (the parsed tree is cached by hash); a
// separate bundle, so it returns its diagnostic as a value (the caller raises the UsageError).
import * as YAML from 'yaml';
import type { Diagnostic } from './usage-error.ts';

export type ParsedYaml = { ok: true; value: unknown } | { ok: false; diagnostic: Diagnostic };

class Found extends Error {
  constructor(readonly diagnostic: Diagnostic) {
    super(diagnostic.headline);
  }
}

/** The most alias expansions a config file may use (the yaml package's default limit). */
export const MAX_ALIAS_COUNT = 100;

function at(file: string, lc: YAML.LineCounter, offset: number | undefined): string {
  const pos = lc.linePos(offset ?? 0);
  return `${file}:${pos.line}:${pos.col}`;
}

function keyText(key: unknown): string {
  if (YAML.isScalar(key)) return String(key.value);
  return String(key);
}

/** Duplicate keys of any mapping, and the first alias beyond the limit, in one walk of the tree. */
function checkTree(file: string, doc: YAML.Document.Parsed, lc: YAML.LineCounter): void {
  let aliases = 0;
  YAML.visit(doc, {
    Map(_k, map) {
      const seen = new Map<string, YAML.Node | undefined>();
      for (const pair of map.items) {
        const name = keyText(pair.key);
        const first = seen.get(name);
        if (seen.has(name)) {
          const node = pair.key as YAML.Node | null;
          throw new Found({
            headline: `duplicate key ${name} in ${file}`,
            location: at(file, lc, node?.range?.[0]),
            context: { 'first set at': at(file, lc, first?.range?.[0]) },
            hint: 'a key appears once per mapping; remove or rename one of them',
          });
        }
        seen.set(name, (pair.key ?? undefined) as YAML.Node | undefined);
      }
    },
    Alias(_k, node) {
      if (++aliases > MAX_ALIAS_COUNT) {
        throw new Found({
          headline: `${file} uses more than ${MAX_ALIAS_COUNT} YAML aliases`,
          location: at(file, lc, node.range?.[0]),
          hint: 'write the values out, or split the file; aliases are limited so a config cannot expand without bound',
        });
      }
    },
  });
}

/** The plain values of a YAML file (null for an empty one), or the first problem in it. */
export function parseYamlFile(file: string, text: string): ParsedYaml {
  try {
    return { ok: true, value: parse(file, text) };
  } catch (e) {
    if (e instanceof Found) return { ok: false, diagnostic: e.diagnostic };
    throw e;
  }
}

function parse(file: string, text: string): unknown {
  const lc = new YAML.LineCounter();
  const doc = YAML.parseDocument(text, { lineCounter: lc, prettyErrors: false, uniqueKeys: false });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    throw new Found({
      headline: `invalid YAML in ${file}: ${e.message.split('\n')[0]}`,
      location: at(file, lc, e.pos[0]),
      hint: 'fix the YAML syntax; nothing was built',
    });
  }
  checkTree(file, doc, lc);
  try {
    return doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) as unknown;
  } catch (e) {
    // The yaml package throws a ReferenceError when aliases expand past the limit (nested aliases).
    if (!(e instanceof ReferenceError)) throw e;
    let first: number | undefined;
    YAML.visit(doc, {
      Alias(_k, node) {
        first = node.range?.[0];
        return YAML.visit.BREAK;
      },
    });
    throw new Found({
      headline: `${file}: YAML aliases expand to more than ${MAX_ALIAS_COUNT} copies (${e.message})`,
      location: at(file, lc, first),
      hint: 'write the values out instead of nesting aliases; expansion is limited so a config cannot grow without bound',
    });
  }
}
