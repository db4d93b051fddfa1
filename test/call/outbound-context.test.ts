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
    const sealed = sealOutboundContext(SECRET, context);
    expect(sealed).toMatch(/^c1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(openOutboundContext(SECRET, sealed)).toEqual(context);
  });

  it('refuses another secret, a changed body, junk and the wrong types', () => {
    const sealed = sealOutboundContext(SECRET, context);
    expect(openOutboundContext('other-secret', sealed)).toBeNull();
    const [v, body, sig] = sealed.split('.');
    const changed = Buffer.from(JSON.stringify({ ...context, attemptId: 'cmp_abc.4.1' })).toString(
      'base64url',
    );
    expect(openOutboundContext(SECRET, `${v}.${changed}.${sig}`)).toBeNull();
    expect(openOutboundContext(SECRET, `${v}.${body}`)).toBeNull();
    for (const junk of [undefined, 42, ['c1'], '', 'c1..', 'x'.repeat(MAX_SEALED_CONTEXT_CHARS + 1)]) {
      expect(openOutboundContext(SECRET, junk)).toBeNull();
    }
  });

  it('refuses to seal a context too long to ride in a URL', () => {
    expect(() =>
      sealOutboundContext(SECRET, { ...context, variables: { notes: 'x'.repeat(MAX_SEALED_CONTEXT_CHARS) } }),
    ).toThrow(RangeError);
  });
});
