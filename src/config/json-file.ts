// Reads one JSON file of the config folder and checks it against its schema. Every failure becomes
// a one-line ConfigError: `<file>: <JSON pointer>: <what is wrong>`.
import { readFileSync } from 'node:fs';
import { isAbsolute, relative } from 'node:path';
import type { Static, TSchema } from '@sinclair/typebox';
import { type ValueError, ValueErrorType } from '@sinclair/typebox/errors';
import { Value } from '@sinclair/typebox/value';
import { ConfigError } from '../errors.js';

/** A config file as messages name it: relative to the working directory when inside it. */
export function displayPath(file: string, cwd: string): string {
  const rel = relative(cwd, file);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file;
}

/** `<file>: <pointer>: <problem>`; the pointer is `/` for the whole document. */
export function fileError(shownFile: string, pointer: string, problem: string): Error {
  return new ConfigError(`${shownFile}: ${pointer === '' ? '/' : pointer}: ${problem}`);
}

/** Parses the file, or throws naming the file and, where V8 reports one, the line and column. */
export function readJson(file: string, shownFile: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unknown error';
    throw new ConfigError(`${shownFile}: cannot read file (${code})`);
  }
  try {
    return JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new ConfigError(`${shownFile}: invalid JSON: ${describeParseError((err as Error).message, text)}`);
  }
}

/**
 * V8's parse messages may quote a slice of the file, which can hold a secret and span lines; keep
 * only the reason and turn the character offset into a line and column.
 */
function describeParseError(message: string, text: string): string {
  const reason = message
    .replace(/, ".*" is not valid JSON$/s, '')
    .replace(/ \(line \d+ column \d+\)/, '')
    .replace(/ in JSON at position \d+/, '')
    .replace(/\s+/g, ' ')
    .trim();
  const position = /at position (\d+)/.exec(message);
  if (position === null) return reason;
  const before = text.slice(0, Number(position[1]));
  const line = before.split('\n').length;
  const column = before.length - before.lastIndexOf('\n');
  return `${reason} at line ${line} column ${column}`;
}

/**
 * Returns `value` typed by `schema`, or throws for the most telling problem in it. `at` is the JSON
 * pointer of `value` inside the file, when it is a part of it.
 */
export function checkShape<T extends TSchema>(
  schema: T,
  value: unknown,
  shownFile: string,
  at = '',
): Static<T> {
  if (Value.Check(schema, value)) return value;
  const errors = [...Value.Errors(schema, value)];
  // An unknown field is most often a misspelt one, which also explains a "required" error next to it.
  const first = errors.find((error) => error.type === ValueErrorType.ObjectAdditionalProperties) ?? errors[0];
  if (first === undefined) throw fileError(shownFile, at, 'does not match the expected shape');
  throw fileError(shownFile, `${at}${first.path}`, describeValueError(first));
}

/** What is wrong with one value, in the words config errors use (the value quoted unless redacted). */
export function describeValueError(error: ValueError): string {
  const schema = error.schema as Record<string, unknown>;
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return 'is required';
    case ValueErrorType.ObjectAdditionalProperties:
      return 'unknown field';
  }
  const problem =
    typeof schema.errorMessage === 'string' ? schema.errorMessage : genericProblem(error, schema);
  if (schema.redactValue === true || !isQuotable(error.value)) return problem;
  return `${problem}, got ${quoteJson(error.value)}`;
}

function genericProblem(error: ValueError, schema: Record<string, unknown>): string {
  switch (error.type) {
    case ValueErrorType.String:
      return 'must be a string';
    case ValueErrorType.StringMinLength:
      return schema.minLength === 1 ? 'must not be empty' : `must be at least ${schema.minLength} characters`;
    case ValueErrorType.StringMaxLength:
      return `must be at most ${schema.maxLength} characters`;
    case ValueErrorType.StringPattern:
      return `must match ${schema.pattern}`;
    case ValueErrorType.Integer:
      return 'must be an integer';
    case ValueErrorType.IntegerMinimum:
    case ValueErrorType.IntegerMaximum:
      return rangeProblem(schema, 'an integer');
    case ValueErrorType.Number:
      return 'must be a number';
    case ValueErrorType.Boolean:
      return 'must be true or false';
    case ValueErrorType.Object:
      return 'must be an object';
    case ValueErrorType.Array:
      return 'must be an array';
    case ValueErrorType.ArrayUniqueItems:
      return 'must not list the same entry twice';
    case ValueErrorType.Literal:
      return `must be ${JSON.stringify(schema.const)}`;
    default:
      return error.message.charAt(0).toLowerCase() + error.message.slice(1);
  }
}

function rangeProblem(schema: Record<string, unknown>, noun: string): string {
  const { minimum, maximum } = schema;
  if (minimum !== undefined && maximum !== undefined) return `must be ${noun} from ${minimum} to ${maximum}`;
  return minimum !== undefined ? `must be ${noun} >= ${minimum}` : `must be ${noun} <= ${maximum}`;
}

/** Scalars are quoted; objects and arrays would make the line long and say little. */
function isQuotable(value: unknown): boolean {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

function quoteJson(value: unknown): string {
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 76)}..."` : text;
}
