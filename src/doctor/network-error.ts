// A network failure in a few words: the system error code when there is one (ECONNREFUSED,
// ENOTFOUND…), "no answer in N ms" for a timeout, else the error's own message.

export function describeNetworkError(err: unknown, timeoutMs: number): string {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) {
    return `no answer within ${timeoutMs} ms`;
  }
  const own = (err as { code?: unknown }).code;
  if (typeof own === 'string' && /^E[A-Z_]+$/.test(own)) return own;
  const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  const message = err instanceof Error ? err.message : String(err);
  // Wrapped errors keep the system code only in their text ("agent unreachable: connect ECONNREFUSED …").
  return /\b(E[A-Z]{4,})\b/.exec(message)?.[1] ?? message;
}
