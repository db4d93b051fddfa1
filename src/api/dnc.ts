// The do-not-call list on the wire.
import { type Static, Type } from '@sinclair/typebox';
import { RejectedRow } from './campaigns.js';
import { Cursor, Iso, Limit, NextCursor, PAGE_LIMITS, Query, Str } from './common.js';

export const MAX_DNC_NUMBERS_PER_UPLOAD = 50_000;

/** The JSON form of an upload; text/csv with a phone column is the other. */
export const DncJson = Type.Object(
  {
    numbers: Type.Array(Type.String({ maxLength: 64 }), {
      minItems: 1,
      maxItems: MAX_DNC_NUMBERS_PER_UPLOAD,
    }),
  },
  { additionalProperties: false, 'x-subject': 'invalid do-not-call list' },
);
export const DncAdded = Type.Object({
  added: Type.Integer(),
  alreadyListed: Type.Integer(),
  rejected: Type.Array(RejectedRow),
});
export type DncAdded = Static<typeof DncAdded>;
export const DncEntry = Type.Object({
  number: Str(),
  listed: Type.Literal(true),
  addedAt: Iso('when listed'),
});
export const DncQuery = Query({
  q: Type.Optional(
    Type.String({
      pattern: '^\\+?\\d{1,15}$',
      description: 'part of the number',
      errorMessage: 'must be digits of a number, like 555 or +1212',
    }),
  ),
  limit: Limit(PAGE_LIMITS.dnc.max, PAGE_LIMITS.dnc.fallback),
  cursor: Cursor,
});
export const DncListed = Type.Object({ number: Str(), addedAt: Iso('when listed') });
export type DncListed = Static<typeof DncListed>;
export const DncPage = Type.Object({
  numbers: Type.Array(DncListed),
  nextCursor: NextCursor,
});
