// Checks a request body against a TypeBox schema and says what is wrong with each bad field, once:
// `pacing.callsPerSecond: must be a number from 0.01 to 100`. Unknown fields are refused by name.
import type { Static, TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { describeValueError } from '../config/json-file.js';
import { BadRequestError } from '../errors.js';

export interface FieldError {
  /** `pacing.callsPerSecond`, `from[1]`; empty for the whole body. */
  field: string;
  problem: string;
}

/** JSON pointer `/from/1/x` → `from[1].x`. */
export function fieldName(pointer: string): string {
  let name = '';
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    name += /^\d+$/.test(part) ? `[${part}]` : name === '' ? part : `.${part}`;
  }
  return name;
}

/** One error per field, the first TypeBox reports for it, in document order. */
export function schemaErrors(schema: TSchema, value: unknown): FieldError[] {
  if (Value.Check(schema, value)) return [];
  const seen = new Set<string>();
  const errors: FieldError[] = [];
  for (const error of Value.Errors(schema, value)) {
    // A bad parent explains its children: report `schedule`, not also `schedule.windows`.
    if ([...seen].some((path) => error.path.startsWith(`${path}/`))) continue;
    if (seen.has(error.path)) continue;
    seen.add(error.path);
    errors.push({ field: fieldName(error.path), problem: describeValueError(error) });
    if (errors.length === MAX_REPORTED) break;
  }
  return errors;
}

/** A body with many bad fields is answered with the first few; the rest follow once these are fixed. */
const MAX_REPORTED = 20;

export function describeFieldErrors(subject: string, errors: readonly FieldError[]): string {
  const parts = errors.map((e) => (e.field === '' ? e.problem : `${e.field}: ${e.problem}`));
  return `${subject}: ${parts.join('; ')}`;
}

/** `value` typed by `schema`, or a BadRequestError naming every bad field. */
export function checkBody<T extends TSchema>(schema: T, value: unknown, subject: string): Static<T> {
  const errors = schemaErrors(schema, value);
  if (errors.length > 0) throw new BadRequestError(describeFieldErrors(subject, errors));
  return value as Static<T>;
}
