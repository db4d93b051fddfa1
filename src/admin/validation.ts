// How the admin API checks what a request carries, against the route's schemas from src/api:
// - a query string: each parameter known and given once, numbers read from their text, then the
//   schema; refused as "limit must be an integer from 1 to 200" (the parameter, then its problem);
// - a body or path parameters: the schema, every bad field named once ("body: name: must not be
//   empty"; a schema's `x-subject` names the subject), or, for a schema marked `x-sentences`, the
//   first problem as a sentence ("to must be a phone number in E.164", `unknown field "x"`).
// A schema's `errorMessage` says a field's problem in the API's own words.
import type { TSchema } from '@sinclair/typebox';
import { Value, type ValueError, ValueErrorType } from '@sinclair/typebox/value';
import { describeValueError } from '../config/json-file.js';
import { BadRequestError } from '../errors.js';
import { describeFieldErrors, fieldName, schemaErrors } from '../outbound/field-errors.js';

type Schema = TSchema & Record<string, unknown>;
type Validation = { value: unknown } | { error: Error };

const INTEGER_TEXT = /^-?\d{1,15}$/;
const NUMBER_TEXT = /^-?\d{1,15}(\.\d{1,15})?$/;

/** A query parameter's text as the number its schema asks for, when it reads as one. */
function coerce(schema: Schema | undefined, text: string): unknown {
  const type = schema?.type;
  if (type === 'integer' && INTEGER_TEXT.test(text)) return Number(text);
  if (type === 'number' && NUMBER_TEXT.test(text)) return Number(text);
  return text;
}

function checkQuery(schema: Schema, raw: unknown): Validation {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const names = Object.keys(properties);
  const query = (raw ?? {}) as Record<string, unknown>;
  const value: Record<string, unknown> = {};
  for (const [name, given] of Object.entries(query)) {
    if (!Object.hasOwn(properties, name)) {
      const known = names.length > 0 ? `; known: ${names.join(', ')}` : '';
      return refused(`unknown query parameter ${JSON.stringify(name.slice(0, 40))}${known}`);
    }
    // A parameter given twice is ambiguous.
    if (Array.isArray(given)) return refused(`${name} may be given once`);
    value[name] = typeof given === 'string' ? coerce(properties[name], given) : given;
  }
  const first = Value.Errors(schema, value).First();
  if (first === undefined) return { value };
  return refused(`${fieldName(first.path)} ${problemOf(first)}`);
}

function problemOf(error: ValueError): string {
  const schema = error.schema as Schema;
  return typeof schema.errorMessage === 'string' ? schema.errorMessage : describeValueError(error);
}

/** The first problem as the sentence the handlers of these routes always wrote. */
function sentence(error: ValueError): string {
  const field = fieldName(error.path);
  if (error.type === ValueErrorType.ObjectAdditionalProperties) {
    const parent = fieldName(error.path.slice(0, error.path.lastIndexOf('/')));
    const name = JSON.stringify(field.slice(field.lastIndexOf('.') + 1).slice(0, 40));
    return `${parent === '' ? '' : `${parent}: `}unknown field ${name}`;
  }
  const schema = error.schema as Schema;
  const problem =
    typeof schema.errorMessage === 'string'
      ? schema.errorMessage
      : error.type === ValueErrorType.ObjectRequiredProperty
        ? 'is required'
        : describeValueError(error);
  return `${field === '' ? 'the body' : field} ${problem}`;
}

function checkFields(schema: Schema, value: unknown, part: string): Validation {
  if (schema['x-sentences'] === true) {
    const first = Value.Errors(schema, value).First();
    return first === undefined ? { value } : refused(sentence(first));
  }
  const errors = schemaErrors(schema, value);
  if (errors.length === 0) return { value };
  const subject = typeof schema['x-subject'] === 'string' ? schema['x-subject'] : part;
  return refused(describeFieldErrors(subject, errors));
}

function refused(message: string): { error: Error } {
  return { error: new BadRequestError(message) };
}

/** A Fastify validator compiler: takes any route's schema (src/api's are TypeBox, hence JSON Schema). */
export function adminValidator({ schema, httpPart }: { schema: unknown; httpPart?: string }) {
  const s = schema as Schema;
  if (httpPart === 'querystring') return (value: unknown) => checkQuery(s, value);
  // Headers are read by the hooks that need them (authorization, CSRF, range).
  if (httpPart === 'headers') return () => true;
  return (value: unknown) => checkFields(s, value, httpPart ?? 'request');
}
