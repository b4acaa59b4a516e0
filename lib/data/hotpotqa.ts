// HotpotQA reader for three layouts, told apart per record by the id field:
//   `_id`          official distractor JSON: supporting_facts [[title, sent_id]], context [[title, [sentences]]]
//   `question_id`  IRCoT processed: answers_objects [{number, date, spans}], contexts [{id, title, paragraph_text, is_supporting}]
//   `id`           Hugging Face hotpot_qa: supporting_facts {title[], sent_id[]}, context {title[], sentences[][]}
// Every supporting fact must name a context paragraph, and its sentence index must exist there.
// IRCoT has paragraph-level support only, so its supporting facts carry no sent_id and each of its
// paragraphs is one "sentence". De-duplication across files (the IRCoT file repeats the official
// records) is done by loadSources, which prefers the layouts with sentence-level facts.
import { DataError, describeValue, type Location, type ReadOptions, type ReadResult } from './data-error.ts';
import {
  expectArray,
  expectBoolean,
  expectIndex,
  expectObject,
  expectOneOf,
  expectString,
  expectStringArray,
  expectText,
  type JsonObject,
} from './expect.ts';
import type { SourceRecord } from './jsonl.ts';
import { readItems } from './read-records.ts';
import type { HotpotqaItem, Paragraph, SourceFormat, SupportingFact } from './source-item.ts';

const TYPES = ['bridge', 'comparison'] as const;
const LEVELS = ['easy', 'medium', 'hard'] as const;

/** A supporting fact as read, with the field path to blame if it does not resolve. */
interface RawFact {
  title: string;
  sent_id: number;
  titleField: string;
  sentField: string;
}

function resolveFacts(facts: RawFact[], paragraphs: Paragraph[], at: Location): SupportingFact[] {
  const byTitle = new Map<string, Paragraph>();
  for (const p of paragraphs) if (!byTitle.has(p.title)) byTitle.set(p.title, p);
  return facts.map((f) => {
    const p = byTitle.get(f.title);
    if (!p) throw new DataError(at, f.titleField, 'the title of a context paragraph', describeValue(f.title));
    if (f.sent_id >= p.sentences.length) {
      const n = p.sentences.length;
      throw new DataError(
        at,
        f.sentField,
        `a sentence index below ${n} (paragraph ${JSON.stringify(f.title)} has ${n} sentence${n === 1 ? '' : 's'})`,
        describeValue(f.sent_id),
      );
    }
    return { title: f.title, sent_id: f.sent_id };
  });
}

function common(value: JsonObject, at: Location, idField: string) {
  return {
    source_id: expectText(value[idField], at, idField),
    question: expectText(value.question, at, 'question'),
    gold_answer: expectText(value.answer, at, 'answer'),
    type: expectOneOf(value.type, at, 'type', TYPES),
    level: expectOneOf(value.level, at, 'level', LEVELS),
  };
}

function parseDistractor({ at, value }: SourceRecord): HotpotqaItem {
  const head = common(value, at, '_id');
  const paragraphs = expectArray(value.context, at, 'context').map((entry, i): Paragraph => {
    const pair = expectArray(entry, at, `context[${i}]`);
    if (pair.length !== 2) throw new DataError(at, `context[${i}]`, 'a [title, [sentences]] pair', describeValue(pair));
    return {
      title: expectString(pair[0], at, `context[${i}][0]`),
      sentences: expectStringArray(pair[1], at, `context[${i}][1]`),
    };
  });
  const facts = expectArray(value.supporting_facts, at, 'supporting_facts').map((entry, i): RawFact => {
    const pair = expectArray(entry, at, `supporting_facts[${i}]`);
    if (pair.length !== 2)
      throw new DataError(at, `supporting_facts[${i}]`, 'a [title, sent_id] pair', describeValue(pair));
    return {
      title: expectString(pair[0], at, `supporting_facts[${i}][0]`),
      sent_id: expectIndex(pair[1], at, `supporting_facts[${i}][1]`),
      titleField: `supporting_facts[${i}][0]`,
      sentField: `supporting_facts[${i}][1]`,
    };
  });
  const supporting = resolveFacts(facts, paragraphs, at);
  return item(head, 'hotpotqa-distractor', at, paragraphs, supporting);
}

function sameLength(a: unknown[], b: unknown[], at: Location, field: string, aName: string, bName: string): void {
  if (a.length !== b.length) {
    throw new DataError(at, field, `${aName} and ${bName} of the same length`, `${a.length} and ${b.length}`);
  }
}

function parseHf({ at, value }: SourceRecord): HotpotqaItem {
  const head = common(value, at, 'id');
  const context = expectObject(value.context, at, 'context');
  const titles = expectStringArray(context.title, at, 'context.title');
  const sentences = expectArray(context.sentences, at, 'context.sentences');
  sameLength(titles, sentences, at, 'context', 'context.title', 'context.sentences');
  const paragraphs = titles.map(
    (title, i): Paragraph => ({
      title,
      sentences: expectStringArray(sentences[i], at, `context.sentences[${i}]`),
    }),
  );
  const sf = expectObject(value.supporting_facts, at, 'supporting_facts');
  const sfTitles = expectStringArray(sf.title, at, 'supporting_facts.title');
  const sfSent = expectArray(sf.sent_id, at, 'supporting_facts.sent_id');
  sameLength(sfTitles, sfSent, at, 'supporting_facts', 'supporting_facts.title', 'supporting_facts.sent_id');
  const facts = sfTitles.map(
    (title, i): RawFact => ({
      title,
      sent_id: expectIndex(sfSent[i], at, `supporting_facts.sent_id[${i}]`),
      titleField: `supporting_facts.title[${i}]`,
      sentField: `supporting_facts.sent_id[${i}]`,
    }),
  );
  const supporting = resolveFacts(facts, paragraphs, at);
  return item(head, 'hotpotqa-hf', at, paragraphs, supporting);
}

function item(
  head: ReturnType<typeof common>,
  format: SourceFormat,
  at: Location,
  paragraphs: Paragraph[],
  supporting: SupportingFact[],
): HotpotqaItem {
  const { source_id, question, gold_answer, type, level } = head;
  return {
    task: 'hotpotqa',
    source_id,
    format,
    question,
    gold_answer,
    origin: at,
    paragraphs,
    supporting,
    type,
    level,
  };
}

/** The answer of an IRCoT `answers_objects` entry: its spans, else its number, else its date. */
function ircotAnswer(value: unknown, at: Location): string {
  const list = expectArray(value, at, 'answers_objects');
  if (list.length === 0) throw new DataError(at, 'answers_objects', 'at least one answer object', describeValue(list));
  const first = expectObject(list[0], at, 'answers_objects[0]');
  const spans = expectStringArray(first.spans ?? [], at, 'answers_objects[0].spans').filter((s) => s.trim() !== '');
  if (spans.length > 0) return spans.join(', ');
  const number = first.number;
  if ((typeof number === 'string' && number.trim() !== '') || typeof number === 'number') return String(number).trim();
  if (first.date !== undefined) {
    const date = expectObject(first.date, at, 'answers_objects[0].date');
    const parts = [date.day, date.month, date.year].filter(
      (p) => (typeof p === 'string' && p.trim() !== '') || typeof p === 'number',
    );
    if (parts.length > 0) return parts.map((p) => String(p).trim()).join(' ');
  }
  throw new DataError(at, 'answers_objects[0]', 'non-empty spans, a number or a date', describeValue(first));
}

function parseIrcot({ at, value }: SourceRecord): HotpotqaItem {
  const source_id = expectText(value.question_id, at, 'question_id');
  const question = expectText(value.question_text, at, 'question_text');
  const gold_answer = ircotAnswer(value.answers_objects, at);
  const paragraphs: Paragraph[] = [];
  const supporting: SupportingFact[] = [];
  expectArray(value.contexts, at, 'contexts').forEach((entry, i) => {
    const c = expectObject(entry, at, `contexts[${i}]`);
    const title = expectString(c.title, at, `contexts[${i}].title`);
    const text = expectString(c.paragraph_text, at, `contexts[${i}].paragraph_text`);
    const isSupporting = expectBoolean(c.is_supporting, at, `contexts[${i}].is_supporting`);
    paragraphs.push({ title, sentences: [text] });
    if (isSupporting && !supporting.some((s) => s.title === title)) supporting.push({ title });
  });
  return {
    task: 'hotpotqa',
    source_id,
    format: 'hotpotqa-ircot',
    question,
    gold_answer,
    origin: at,
    paragraphs,
    supporting,
    type: null,
    level: null,
  };
}

/** Parses one HotpotQA record of any of the three layouts. */
export function parseHotpotqa(record: SourceRecord): HotpotqaItem {
  const v = record.value;
  if ('_id' in v) return parseDistractor(record);
  if ('question_id' in v) return parseIrcot(record);
  if ('id' in v) return parseHf(record);
  throw new DataError(record.at, '_id', 'a record id (`_id`, `question_id` or `id`)', describeValue(undefined));
}

/** Reads one HotpotQA file (.jsonl, .json or .parquet); layouts may mix. No de-duplication. */
export async function readHotpotqa(path: string, options: ReadOptions = {}): Promise<ReadResult<HotpotqaItem>> {
  return readItems(path, options, parseHotpotqa);
}
