// The outbound context rides through the carrier in URLs: only what this server sealed opens, and
// nothing too long to travel is sealed.
import { describe, expect, it } from 'vitest';
import {
  MAX_SEALED_CONTEXT_CHARS,
  type OutboundContext,
  openOutboundContext,
  sealOutboundContext,
} from '../../src/call/outbound-context.js';

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

describe('the sealed outbound context', () => {
  it('opens what was sealed, and is safe in a URL', () => {
    const sealed = sealOutboundContext(SECRET, context, BINDING);
    expect(sealed).toMatch(/^c1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(openOutboundContext(SECRET, sealed, AS_TWILIO)).toEqual(context);
  });

  it('refuses another secret, a changed body, junk and the wrong types', () => {
    const sealed = sealOutboundContext(SECRET, context, BINDING);
    expect(openOutboundContext('other-secret', sealed, AS_TWILIO)).toBeNull();
    const [v, body, sig] = sealed.split('.');
    const changed = Buffer.from(JSON.stringify({ ...context, attemptId: 'cmp_abc.4.1' })).toString(
      'base64url',
    );
    expect(openOutboundContext(SECRET, `${v}.${changed}.${sig}`, AS_TWILIO)).toBeNull();
    expect(openOutboundContext(SECRET, `${v}.${body}`, AS_TWILIO)).toBeNull();
    for (const junk of [undefined, 42, ['c1'], '', 'c1..', 'x'.repeat(MAX_SEALED_CONTEXT_CHARS + 1)]) {
      expect(openOutboundContext(SECRET, junk, AS_TWILIO)).toBeNull();
    }
  });

  it('refuses to seal a context too long to ride in a URL', () => {
    expect(() =>
      sealOutboundContext(
        SECRET,
        { ...context, variables: { notes: 'x'.repeat(MAX_SEALED_CONTEXT_CHARS) } },
        BINDING,
      ),
    ).toThrow(RangeError);
  });

  it('is bound to its carrier and its expiry', () => {
    // Issue 19: a context passed through another carrier's request once closed a real attempt.
    const sealed = sealOutboundContext(SECRET, context, BINDING);
    expect(openOutboundContext(SECRET, sealed, { carrier: 'exotel', nowMs: NOW })).toBeNull();
    expect(openOutboundContext(SECRET, sealed, { carrier: 'twilio', nowMs: NOW + 60_000 })).toBeNull();
    expect(openOutboundContext(SECRET, sealed, { carrier: 'twilio', nowMs: NOW + 59_999 })).toEqual(context);
  });
});
