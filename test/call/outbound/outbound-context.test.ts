// The outbound context stays in the store; only a reference bound to its carrier rides through the
// carrier: only what this server issued resolves, for its carrier, until its expiry.
import { describe, expect, it } from 'vitest';
import {
  contextIdOf,
  decodeContext,
  encodeContext,
  issueContextRef,
  MAX_CONTEXT_BYTES,
  OUTBOUND_CONTEXT_TTL_MS,
  type OutboundContext,
  outboundContexts,
} from '../../../src/call/outbound/outbound-context.js';
import type { OutboundContextRecords } from '../../../src/store/store.js';

const SECRET = 'stream-token-secret-for-tests';
const NOW = 1_800_000_000_000;
const BINDING = { carrier: 'twilio', expiresAtMs: NOW + 60_000 };
const AS_TWILIO = { carrier: 'twilio', nowMs: NOW };
const context: OutboundContext = {
  attemptId: 'cmp_abc.3.1',
  campaignId: 'cmp_abc',
  contact: 3,
  profile: 'default',
  variables: { first_name: 'Ada' },
  amd: { mode: 'voicemail', voicemailText: 'Hi Ada', voicemailAudioUrl: null },
};

/** The store's records in a map, counting reads. */
function memoryRecords(): OutboundContextRecords & { reads: number; values: Map<string, string> } {
  const values = new Map<string, string>();
  const records = {
    reads: 0,
    values,
    async putOutboundContext(id: string, value: string) {
      values.set(id, value);
    },
    async getOutboundContext(id: string) {
      records.reads++;
      return values.get(id) ?? null;
    },
  };
  return records;
}

describe('the outbound context reference', () => {
  it('is opaque, random and safe in a URL, and names its id only for its carrier', () => {
    const a = issueContextRef(SECRET, 'twilio');
    const b = issueContextRef(SECRET, 'twilio');
    expect(a.ref).toMatch(/^r1\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{22}$/);
    expect(a.id).not.toBe(b.id);
    expect(contextIdOf(SECRET, a.ref, 'twilio')).toBe(a.id);
    expect(contextIdOf(SECRET, a.ref, 'exotel')).toBeNull();
    expect(contextIdOf('other-secret', a.ref, 'twilio')).toBeNull();
    const [v, , tag] = a.ref.split('.');
    expect(contextIdOf(SECRET, `${v}.${b.id}.${tag}`, 'twilio')).toBeNull();
    for (const junk of [undefined, 42, ['r1'], '', 'r1..', 'x'.repeat(100), `c1.${a.id}.${tag}`]) {
      expect(contextIdOf(SECRET, junk, 'twilio')).toBeNull();
    }
  });
});

describe('the kept outbound context', () => {
  it('decodes what was encoded, bound to its carrier and its expiry', () => {
    // Issue 19: a context passed through another carrier's request once closed a real attempt.
    const encoded = encodeContext(context, BINDING);
    expect(decodeContext(encoded, AS_TWILIO)).toEqual(context);
    expect(decodeContext(encoded, { carrier: 'exotel', nowMs: NOW })).toBeNull();
    expect(decodeContext(encoded, { carrier: 'twilio', nowMs: NOW + 60_000 })).toBeNull();
    expect(decodeContext(encoded, { carrier: 'twilio', nowMs: NOW + 59_999 })).toEqual(context);
    for (const junk of [null, '', '{', '42', JSON.stringify({ ...context, variables: { a: 1 } })]) {
      expect(decodeContext(junk, AS_TWILIO)).toBeNull();
    }
  });

  it('refuses to keep a context larger than its bound', () => {
    expect(() =>
      encodeContext({ ...context, variables: { notes: 'x'.repeat(MAX_CONTEXT_BYTES) } }, BINDING),
    ).toThrow(RangeError);
  });

  it('is kept in the store and resolved by its reference; a forged one costs no store read', async () => {
    const records = memoryRecords();
    let now = NOW;
    const contexts = outboundContexts(SECRET, records, () => now);
    const ref = await contexts.keep(context, 'twilio');
    // The reference holds nothing of the context.
    expect(ref).not.toContain('Ada');
    expect(Buffer.from(ref.split('.')[1]!, 'base64url').toString('latin1')).not.toContain('Ada');
    expect(await contexts.resolve(ref, 'twilio')).toEqual(context);
    expect(records.reads).toBe(1);

    expect(await contexts.resolve(ref, 'plivo')).toBeNull();
    expect(await contexts.resolve(issueContextRef('forger', 'twilio').ref, 'twilio')).toBeNull();
    expect(records.reads).toBe(1);

    // Known to the server but gone from the store: no context.
    expect(await contexts.resolve(issueContextRef(SECRET, 'twilio').ref, 'twilio')).toBeNull();
    now = NOW + OUTBOUND_CONTEXT_TTL_MS;
    expect(await contexts.resolve(ref, 'twilio')).toBeNull();
  });
});
