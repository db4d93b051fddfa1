// Where a recording is asked for besides a profile: a call (`POST /v1/calls`), a campaign's JSON,
// carried to the call in its sealed context; and the fleet message that pauses or resumes a
// recording on the call's instance. Malformed settings are refused with the field named.
import { describe, expect, it } from 'vitest';
import { placeCallRequest } from '../../src/admin/place-call.js';
import { decodeContext, encodeContext } from '../../src/call/outbound/outbound-context.js';
import { parseInboxMessage } from '../../src/fleet/messages.js';
import { campaignSpec } from '../../src/outbound/campaign-spec.js';
import { profileFixture } from '../outbound/rig.js';

const RECORDING = { enabled: true, consent: { text: 'This call is recorded.' }, retentionDays: 14 };
const profiles = { default: profileFixture() };

describe('POST /v1/calls with recording', () => {
  const deps = { profiles, defaultProfile: 'default', carriers: ['twilio'] };

  it('carries the settings, defaults filled', () => {
    expect(placeCallRequest({ to: '+15005550006', recording: RECORDING }, deps).recording).toEqual(RECORDING);
    expect(placeCallRequest({ to: '+15005550006', recording: { enabled: true } }, deps).recording).toEqual({
      enabled: true,
      consent: null,
      retentionDays: 30,
    });
    expect(placeCallRequest({ to: '+15005550006' }, deps).recording).toBeNull();
  });

  it('refuses malformed settings with a 400 naming the field', () => {
    const refuse = (recording: unknown) => {
      try {
        placeCallRequest({ to: '+15005550006', recording }, deps);
        return 'accepted';
      } catch (err) {
        expect((err as { statusCode?: number }).statusCode).toBe(400);
        return (err as Error).message;
      }
    };
    expect(refuse('on')).toMatch(/^recording must be/);
    expect(refuse({ enabled: true, retentionDays: 99_999 })).toMatch(/^recording\.retentionDays must be/);
    expect(refuse({ enabled: true, consent: { audioUrl: 'file:///etc/passwd' } })).toMatch(
      /^recording\.consent\.audioUrl must be an http\(s\) URL/,
    );
  });
});

describe('a campaign with recording', () => {
  const context = { profiles, defaultProfile: 'default', carriers: ['twilio'] };

  it('keeps the settings in its spec', () => {
    expect(campaignSpec({ name: 'renewals', recording: RECORDING }, context).recording).toEqual(RECORDING);
    expect(campaignSpec({ name: 'renewals' }, context).recording).toBeUndefined();
  });

  it('names the bad field among the campaign errors', () => {
    expect(() => campaignSpec({ name: 'renewals', recording: { enabled: 'yes' } }, context)).toThrow(
      /recording\.enabled: must be true or false/,
    );
  });
});

describe('the kept outbound context', () => {
  const BINDING = { carrier: 'twilio', expiresAtMs: Date.now() + 60_000 };
  const base = {
    attemptId: null,
    campaignId: null,
    contact: null,
    profile: 'default',
    variables: {},
    amd: null,
  };

  it('carries recording settings to the call', () => {
    const kept = encodeContext({ ...base, recording: RECORDING }, BINDING);
    expect(decodeContext(kept, { carrier: 'twilio' })?.recording).toEqual(RECORDING);
  });

  it('refuses a context whose recording is malformed', () => {
    const kept = encodeContext(
      { ...base, recording: { enabled: 'yes' } as unknown as typeof RECORDING },
      BINDING,
    );
    expect(decodeContext(kept, { carrier: 'twilio' })).toBeNull();
  });
});

describe('the fleet message that pauses or resumes a recording', () => {
  it('is read whole, and dropped otherwise', () => {
    expect(
      parseInboxMessage('{"type":"recording","id":"r1","from":"a","callSid":"CA1","action":"pause"}'),
    ).toEqual({
      type: 'recording',
      id: 'r1',
      from: 'a',
      callSid: 'CA1',
      action: 'pause',
    });
    expect(
      parseInboxMessage('{"type":"recording","id":"r1","from":"a","callSid":"CA1","action":"stop"}'),
    ).toBeNull();
    expect(parseInboxMessage('{"type":"recording","id":"r1","from":"a","action":"resume"}')).toBeNull();
  });
});
