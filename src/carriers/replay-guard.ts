// A signed carrier request carries a nonce (Vonage's JWT `jti`, Plivo's signature nonce): one
// presented twice is a replay. The shared store's claimOnce keeps that true across instances and
// restarts; without one (unit tests), a bounded in-memory record does for a single process.

/** Claims `key` for `ttlMs`; true for the first claim only (the store's `claimOnce`). */
export type ClaimOnce = (key: string, ttlMs: number) => Promise<boolean>;

const MAX_REMEMBERED = 50_000;

export function inMemoryClaimOnce(nowMs: () => number = Date.now): ClaimOnce {
  // Insertion order is expiry order, since every claim here has the same lifetime.
  const claims = new Map<string, number>();
  return async (key, ttlMs) => {
    const now = nowMs();
    for (const [claimed, expiresAtMs] of claims) {
      if (expiresAtMs > now && claims.size < MAX_REMEMBERED) break;
      claims.delete(claimed);
    }
    const expiresAtMs = claims.get(key);
    if (expiresAtMs !== undefined && expiresAtMs > now) return false;
    claims.delete(key);
    claims.set(key, now + ttlMs);
    return true;
  };
}
