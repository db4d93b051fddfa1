// The webhook queue's dead letters on the wire.
import { type Static, Type } from '@sinclair/typebox';
import { Iso, Limit, Nullable, PAGE_LIMITS, Query, Str } from './common.js';

export const DeadLetterQuery = Query({
  limit: Limit(PAGE_LIMITS.deadLetters.max, PAGE_LIMITS.deadLetters.fallback),
});
export const DeadLetter = Type.Object({
  id: Str(),
  name: Str('the event'),
  provider: Str(),
  idempotencyKey: Str(),
  attempts: Type.Integer(),
  enqueuedAt: Iso('when queued'),
  deadAt: Iso('when given up'),
  lastError: Nullable(Type.String()),
  payload: Type.Unknown(),
});
export type DeadLetter = Static<typeof DeadLetter>;
export const DeadLetters = Type.Object({ deadLetters: Type.Array(DeadLetter) });
export const Requeued = Type.Object({ status: Type.Literal('requeued'), id: Str() });
