// The dial policy refuses every number that costs by the minute beyond a normal call, reaches
// emergency services or is not a full number, and lets ordinary numbers through.
import { describe, expect, it } from 'vitest';
import { readDialPolicy } from '../../src/config/trust-policies.js';
import { DialPolicy } from '../../src/trust/dial-policy.js';

const reasonOf = (policy: DialPolicy, target: string) => {
  const verdict = policy.check(target);
  return verdict.ok ? null : verdict.reason;
};

describe('the default dial policy', () => {
  const policy = new DialPolicy(readDialPolicy({}));

  it.each([
    ['+19002345678', /premium-rate number \(DIAL_BLOCKED_TYPES\)/],
    ['+447012345678', /personal number \(DIAL_BLOCKED_TYPES\)/],
    ['+448712345678', /premium-rate number|shared-cost number/],
    ['+449012345678', /premium-rate number/],
    ['+870773111632', /satellite number/],
    ['+881631234567', /satellite number/],
    ['+33899123456', /premium-rate number/],
  ])('refuses %s', (number, reason) => {
    expect(reasonOf(policy, number)).toMatch(reason);
  });

  it.each(['+1911', '+44999', '+112', '+61000', '+33112', '+4915', 'sip:911@gateway.example', 'sip:112@pbx'])(
    'never dials the emergency number %s',
    (target) => {
      expect(reasonOf(policy, target)).toMatch(/emergency number/);
    },
  );

  it.each(['+144123', '+4480001', '+1234'])('refuses the short code %s', (number) => {
    expect(reasonOf(policy, number)).toMatch(/short code|not a number/);
  });

  it.each(['+14155550123', '+442071234567', '+4915112345678', '+18005551234', '+15550100', '+15551234567'])(
    'dials the ordinary number %s',
    (number) => {
      expect(policy.check(number)).toEqual({ ok: true });
    },
  );

  it('checks the phone number in a SIP address and passes a PBX extension', () => {
    expect(reasonOf(policy, 'sip:+19002345678@gateway.example')).toMatch(/premium-rate/);
    expect(policy.check('sip:1001@pbx.example')).toEqual({ ok: true });
    expect(policy.check('sip:+442071234567@gateway.example')).toEqual({ ok: true });
    expect(reasonOf(policy, 'sip:%2B19002345678@gateway.example')).toMatch(/premium-rate/);
    // A broken escape is read as written, never thrown.
    expect(policy.check('sip:%E0%A4%A@pbx.example')).toEqual({ ok: true });
  });

  it('throws CALLBRIDGE_DIAL_BLOCKED naming the field', () => {
    expect(() => policy.assert('+19002345678', 'to')).toThrow(
      expect.objectContaining({
        code: 'CALLBRIDGE_DIAL_BLOCKED',
        statusCode: 403,
        message: expect.stringMatching(/^to: \+19002345678 is a premium-rate/),
      }),
    );
  });
});

describe('a configured dial policy', () => {
  it('dials only the allowed countries', () => {
    const policy = new DialPolicy(readDialPolicy({ DIAL_ALLOWED_COUNTRIES: 'gb, de' }));
    expect(policy.check('+442071234567')).toEqual({ ok: true });
    expect(policy.check('+4915112345678')).toEqual({ ok: true });
    expect(reasonOf(policy, '+14155550123')).toMatch(/is in US, not in DIAL_ALLOWED_COUNTRIES/);
    expect(reasonOf(policy, '+15551234567')).toMatch(/not in DIAL_ALLOWED_COUNTRIES/);
  });

  it('refuses the blocked prefixes', () => {
    const policy = new DialPolicy(readDialPolicy({ DIAL_BLOCKED_PREFIXES: '+44 20, +1415' }));
    expect(reasonOf(policy, '+442071234567')).toMatch(/starts with \+4420 \(DIAL_BLOCKED_PREFIXES\)/);
    expect(reasonOf(policy, '+14155550123')).toMatch(/starts with \+1415/);
    expect(policy.check('+14085550123')).toEqual({ ok: true });
  });

  it('blocks the types named, and none when set to nothing; satellites and emergencies stay refused', () => {
    const mobiles = new DialPolicy(readDialPolicy({ DIAL_BLOCKED_TYPES: 'mobile' }));
    expect(reasonOf(mobiles, '+4915112345678')).toMatch(/mobile number/);
    expect(mobiles.check('+19002345678')).toEqual({ ok: true });
    const none = new DialPolicy(readDialPolicy({ DIAL_BLOCKED_TYPES: '' }));
    expect(none.check('+19002345678')).toEqual({ ok: true });
    expect(reasonOf(none, '+870773111632')).toMatch(/satellite/);
    expect(reasonOf(none, '+1911')).toMatch(/emergency/);
  });
});

describe('dial policy variables', () => {
  it.each([
    [
      { DIAL_ALLOWED_COUNTRIES: 'US,XX' },
      'DIAL_ALLOWED_COUNTRIES: each entry must be an ISO 3166 alpha-2 country code, got "XX"',
    ],
    [
      { DIAL_ALLOWED_COUNTRIES: 'USA' },
      'DIAL_ALLOWED_COUNTRIES: each entry must be an ISO 3166 alpha-2 country code, got "USA"',
    ],
    [
      { DIAL_BLOCKED_TYPES: 'PREMIUM' },
      /^DIAL_BLOCKED_TYPES: each entry must be one of PREMIUM_RATE, .*, got "PREMIUM"$/,
    ],
    [
      { DIAL_BLOCKED_PREFIXES: '44' },
      'DIAL_BLOCKED_PREFIXES: each entry must be + and 1 to 15 digits, got "44"',
    ],
    [
      { DIAL_BLOCKED_PREFIXES: '+0' },
      'DIAL_BLOCKED_PREFIXES: each entry must be + and 1 to 15 digits, got "+0"',
    ],
  ])('%j is refused in one line', (env, message) => {
    let error: Error | null = null;
    try {
      readDialPolicy(env);
    } catch (err) {
      error = err as Error;
    }
    expect(error).toMatchObject({ code: 'CALLBRIDGE_CONFIG_INVALID' });
    expect(error!.message).not.toContain('\n');
    expect(error!.message).toMatch(message);
  });

  it('defaults to any country, premium, shared-cost and personal numbers refused, no prefixes', () => {
    expect(readDialPolicy({})).toEqual({
      allowedCountries: null,
      blockedTypes: ['PREMIUM_RATE', 'SHARED_COST', 'PERSONAL_NUMBER'],
      blockedPrefixes: [],
    });
  });
});
