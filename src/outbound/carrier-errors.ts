// How the dialer reads a failed `originate`, from the error's own fields (never its message):
//   - the carrier answered and may accept later (`retryable`, with an HTTP `status`: 429, 5xx):
//     `retry_later`, the contact waits and the attempt does not count against its budget;
//   - the carrier answered and refused for good (`retryable` false: a bad number, a blocked
//     destination, bad credentials): `failed`, the attempt fails like a failed call;
//   - no answer came (a timeout or a broken connection, so no `status`): `unknown`. The carrier may
//     have placed the call, so it is never dialed again blindly: the attempt stays open and waits for
//     a callback naming it (reconcile.ts, lost dispatches).
// An error with no `retryable` field at all is a defect on our side, not the carrier's: `failed`.

export type OriginateFailure = 'retry_later' | 'failed' | 'unknown';

export function classifyOriginateError(err: unknown): { kind: OriginateFailure; code: string } {
  const fields = typeof err === 'object' && err !== null ? (err as Record<string, unknown>) : {};
  const code = typeof fields.code === 'string' ? fields.code : 'UNKNOWN';
  if (typeof fields.retryable !== 'boolean') return { kind: 'failed', code };
  if (!fields.retryable) return { kind: 'failed', code };
  return { kind: typeof fields.status === 'number' ? 'retry_later' : 'unknown', code };
}
