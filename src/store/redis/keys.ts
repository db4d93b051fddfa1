// Every key the Redis store writes, in one place: its name, what it holds and what keeps it from
// growing without end. On a Redis Cluster each key hashes to its own slot, so per-call and
// per-delivery keys spread over the whole cluster; only the queue's keys share a hash tag, because
// its steps (claim, retry, dead-letter, requeue) touch several of them atomically, and every one of
// them is bounded (limits.ts). Nothing else carries braces, and REDIS_KEY_PREFIX may not.
//
//   once:<key>                 single-use claim                   expires: validity + skew allowance
//   outbound-context:<id>      an outbound call's context JSON    expires: the context's lifetime (12 h)
//   idem:<key>                 webhook idempotency key            expires: in-progress TTL, then dedupe window
//   count:<key>                auth-failure window counter        expires: with its window
//   provider-verified          hash provider → last verified ms   expires: PROVIDER_VERIFIED_RETENTION_MS after
//                                                                   the last write; one field per provider
//   call:<callSid>             call record JSON                   expires: startedAt + record retention
//   calls-by-start:<YYYY-MM-DD> that UTC day's index of records  expires: the day's end + record retention
//   {queue}:stream             waiting and in-flight events       bounded: maxQueuedEvents (and MAXLEN ~)
//   {queue}:delayed            events waiting for a retry         bounded: counted in maxQueuedEvents
//   {queue}:ages               id → enqueued ms, of those above   bounded: maxQueuedEvents
//   {queue}:dead               hash id → dead letter JSON         expires: deadLetterRetentionMs after the
//   {queue}:dead-at            id → dead ms, the listing order      last write; bounded: maxDeadLetters
//   {analysis}:jobs, :due,     post-call analysis work              bounded: the analysis queue's size
//   :attempts, :errors, :leases                                       (src/speech/analysis.ts)
//   api-keys                   hash key id → API key JSON           bounded: the keys admins create
//   session:<id>               a console session JSON               expires: with the session
//   key-sessions:<keyId>       set of the key's session ids         expires: with its newest session
//   audit                      stream of audit entries              bounded: MAXLEN ~ AUDIT_MAX_ENTRIES
//   dnc-index                  sorted set of listed numbers (lex)   bounded: one member per listed number
//
// The fleet's live-call directory and pub/sub channels live under the same prefix, each key
// expiring; they are listed in src/fleet/keys.ts.

/** How long the provider-verified hash outlives its last write: a provider silent this long is "never". */
export const PROVIDER_VERIFIED_RETENTION_MS = 365 * 24 * 60 * 60_000;

export const DAY_MS = 24 * 60 * 60_000;

export interface RedisKeys {
  once(key: string): string;
  outboundContext(id: string): string;
  idempotency(key: string): string;
  counter(key: string): string;
  providerVerified: string;
  callRecord(callSid: string): string;
  /** The index bucket holding calls that started on the UTC day of `startedMs`. */
  callIndex(startedMs: number): string;
  queue: { stream: string; delayed: string; ages: string; dead: string; deadAt: string };
}

export function redisKeys(prefix: string): RedisKeys {
  return {
    once: (key) => `${prefix}once:${key}`,
    outboundContext: (id) => `${prefix}outbound-context:${id}`,
    idempotency: (key) => `${prefix}idem:${key}`,
    counter: (key) => `${prefix}count:${key}`,
    providerVerified: `${prefix}provider-verified`,
    callRecord: (callSid) => `${prefix}call:${callSid}`,
    callIndex: (startedMs) =>
      `${prefix}calls-by-start:${new Date(dayStartMs(startedMs)).toISOString().slice(0, 10)}`,
    queue: {
      stream: `${prefix}{queue}:stream`,
      delayed: `${prefix}{queue}:delayed`,
      ages: `${prefix}{queue}:ages`,
      dead: `${prefix}{queue}:dead`,
      deadAt: `${prefix}{queue}:dead-at`,
    },
  };
}

/** Midnight UTC of the day holding `ms`. */
export function dayStartMs(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/**
 * Keys that live without an expiry, by their name after the prefix, with what bounds them. Every
 * other key the store writes expires.
 */
export const UNEXPIRING_KEYS: Readonly<Record<string, string>> = {
  '{queue}:stream': 'maxQueuedEvents: enqueueing is refused past it, and XADD trims with MAXLEN ~',
  '{queue}:delayed': 'maxQueuedEvents: a delayed event is one of the queued events',
  '{queue}:ages': 'maxQueuedEvents: one member per queued event',
  '{analysis}:jobs': 'the analysis queue bound: enqueueing is refused past it',
  '{analysis}:due': 'one member per queued analysis job',
  '{analysis}:attempts': 'one field per queued analysis job',
  '{analysis}:errors': 'one field per queued analysis job',
  '{analysis}:leases': 'one member per analysis job in progress',
  'api-keys': 'one field per API key an admin created; deleting the key removes it',
  audit: 'XADD trims with MAXLEN ~ AUDIT_MAX_ENTRIES (src/store/access.ts)',
  'dnc-index': 'one member per number on the do-not-call list; removing the number removes it',
};
