// Field checks shared by the dataset readers: each returns the value with its type narrowed, or
// throws a DataError naming the record's location, the field path and what was expected.
// Field paths read like the JSON they point into: `context[3][1][0]`, `contexts[1].title`.
import { fail, type Location } from './data-error.ts';

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function expectObject(value: unknown, at: Location, field: string): JsonObject {
  if (!isObject(value)) fail(at, field, 'an object', value);
  return value;
}

export function expectString(value: unknown, at: Location, field: string): string {
  if (typeof value !== 'string') fail(at, field, 'a string', value);
  return value;
}

/** A string with at least one non-space character. */
export function expectText(value: unknown, at: Location, field: string): string {
  if (typeof value !== 'string' || value.trim() === '') fail(at, field, 'a non-empty string', value);
  return value;
}

export function expectArray(value: unknown, at: Location, field: string): unknown[] {
  if (!Array.isArray(value)) fail(at, field, 'a list', value);
  return value;
}

export function expectStringArray(value: unknown, at: Location, field: string): string[] {
  const list = expectArray(value, at, field);
  list.forEach((x, i) => expectString(x, at, `${field}[${i}]`));
  return list as string[];
}

/** A non-negative integer (a JSON number; Parquet INT64 arrives as bigint and is accepted). */
export function expectIndex(value: unknown, at: Location, field: string): number {
  const n = typeof value === 'bigint' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) fail(at, field, 'a non-negative integer', value);
  return n;
}

export function expectBoolean(value: unknown, at: Location, field: string): boolean {
  if (typeof value !== 'boolean') fail(at, field, 'a boolean', value);
  return value;
}

export function expectOneOf<T extends string>(value: unknown, at: Location, field: string, options: readonly T[]): T {
  if (typeof value !== 'string' || !(options as readonly string[]).includes(value)) {
    fail(at, field, `one of ${options.map((o) => JSON.stringify(o)).join(', ')}`, value);
  }
  return value as T;
}
