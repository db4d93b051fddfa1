// What every route of the admin API shares: the error body, roles, path parameters, and the
// building blocks of query strings. This folder is the wire contract: it imports nothing of the
// server, so the console (web/) can import it too.
import { type Static, type TSchema, Type } from '@sinclair/typebox';

export const Str = (description?: string) => Type.String(description ? { description } : {});
export const Iso = (description: string) => Type.String({ format: 'date-time', description });
/** A schema referenced by its `$id` in /openapi.json, typed as the schema it names. */
export function ref<T extends TSchema>(schema: T) {
  if (schema.$id === undefined) throw new Error('a referenced schema needs an $id');
  return Type.Unsafe<Static<T>>(Type.Ref(schema.$id));
}
/** One of a list of words. */
export const OneOf = <T extends string>(values: readonly T[], options: Record<string, unknown> = {}) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  );
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Str('a stable CALLBRIDGE_… code'),
      message: Str(),
      retryable: Type.Optional(Type.Boolean({ description: "a carrier's refusal: whether to try again" })),
    }),
  },
  { $id: 'Error', description: 'every error' },
);
export type ErrorBody = Static<typeof ErrorBody>;

export const ROLES = ['viewer', 'operator', 'admin'] as const;
export type Role = (typeof ROLES)[number];
export const Role = OneOf(ROLES, { description: 'viewer < operator < admin' });

export const CallSidParams = Type.Object({ callSid: Type.String({ minLength: 1 }) });
export const IdParams = Type.Object({ id: Type.String({ minLength: 1 }) });
export const NumberParams = Type.Object({
  number: Type.String({ description: 'E.164; `+` may be sent as %2B' }),
});

export const MAX_CURSOR_CHARS = 1_024;

/**
 * A query string's schema: unknown parameters are refused. Each parameter may carry `errorMessage`,
 * the words that follow its name when its value is refused ("limit must be …").
 */
export const Query = <T extends Record<string, TSchema>>(properties: T) =>
  Type.Object(properties, { additionalProperties: false });

/** `limit` of a paged listing: an integer from 1 to `max`, `fallback` when not given. */
export const Limit = (max: number, fallback: number) =>
  Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: max,
      default: fallback,
      description: `page size, 1 to ${max}, default ${fallback}`,
      errorMessage: `must be an integer from 1 to ${max}`,
    }),
  );
/** The store decides whether it handed a cursor out; the schema only bounds what reaches it. */
export const Cursor = Type.Optional(
  Type.String({
    minLength: 1,
    maxLength: MAX_CURSOR_CHARS,
    description: 'nextCursor of the previous page',
    errorMessage: 'is not one a previous page handed out',
  }),
);
export const NextCursor = Nullable(Type.String({ description: 'null on the last page' }));

/** Page sizes of the listings: the fallback when `limit` is not given, and the largest. */
export const PAGE_LIMITS = {
  calls: { fallback: 50, max: 200 },
  campaigns: { fallback: 20, max: 100 },
  contacts: { fallback: 50, max: 200 },
  dnc: { fallback: 50, max: 500 },
  audit: { fallback: 50, max: 200 },
  deadLetters: { fallback: 100, max: 1000 },
} as const;

export const PageQuery = (limits: { fallback: number; max: number }) =>
  Query({ limit: Limit(limits.max, limits.fallback), cursor: Cursor });

export const NoContent = Type.Null({ description: 'no content' });
export const CsvText = Type.String({ description: 'text/csv' });
export const EventStream = Type.String({ description: 'text/event-stream' });
