// Twilio's own helper library is the independent reference for what Twilio signs.
import twilio from 'twilio';
import { describe, expect, it } from 'vitest';
import { computeTwilioSignature, validateTwilioSignature } from '../../../src/carriers/twilio/signature.js';

const TOKEN = '12345678901234567890123456789012';
const URL_PLAIN = 'https://mycompany.example/voice/twilio?tenant=a';
const PARAMS: Record<string, string> = {
  CallSid: 'CA1234567890ABCDE',
  Caller: '+12349013030',
  Digits: '1234',
  From: '+12349013030',
  To: '+18005551212',
  Body: 'héllo & <world> "quoted" ünïcode',
};

describe('computeTwilioSignature', () => {
  it('matches the twilio package for plain params', () => {
    expect(computeTwilioSignature(TOKEN, URL_PLAIN, PARAMS)).toBe(
      twilio.getExpectedTwilioSignature(TOKEN, URL_PLAIN, PARAMS),
    );
  });

  it('matches the twilio package for no params', () => {
    const url = 'wss://mycompany.example/media/twilio';
    expect(computeTwilioSignature(TOKEN, url, {})).toBe(twilio.getExpectedTwilioSignature(TOKEN, url, {}));
  });

  it('matches the twilio package for repeated keys, whatever their order', () => {
    const params = {
      StatusCallbackEvent: ['ringing', 'answered', 'initiated', 'ringing'],
      To: '+15551234567',
    };
    const expected = twilio.getExpectedTwilioSignature(TOKEN, URL_PLAIN, params);
    expect(computeTwilioSignature(TOKEN, URL_PLAIN, params)).toBe(expected);
    expect(
      twilio.validateRequest(TOKEN, computeTwilioSignature(TOKEN, URL_PLAIN, params), URL_PLAIN, params),
    ).toBe(true);
  });

  it('sorts keys case-sensitively as Twilio does', () => {
    const params = { b: '1', B: '2', a: '3', A: '4', _: '5' };
    expect(computeTwilioSignature(TOKEN, URL_PLAIN, params)).toBe(
      twilio.getExpectedTwilioSignature(TOKEN, URL_PLAIN, params),
    );
  });
});

describe('validateTwilioSignature', () => {
  it('accepts a signature made by the twilio package', () => {
    const signature = twilio.getExpectedTwilioSignature(TOKEN, URL_PLAIN, PARAMS);
    expect(validateTwilioSignature(TOKEN, signature, URL_PLAIN, PARAMS)).toBe(true);
  });

  it('makes signatures the twilio validator accepts', () => {
    const signature = computeTwilioSignature(TOKEN, URL_PLAIN, PARAMS);
    expect(twilio.validateRequest(TOKEN, signature, URL_PLAIN, PARAMS)).toBe(true);
  });

  it.each([
    ['https://h.example/voice', 'https://h.example:443/voice'],
    ['https://h.example:443/voice', 'https://h.example/voice'],
    ['http://h.example/voice?x=1', 'http://h.example:80/voice?x=1'],
    ['http://h.example:80/voice?x=1', 'http://h.example/voice?x=1'],
    ['https://user:pw@h.example/voice', 'https://user:pw@h.example:443/voice'],
  ])('accepts a request to %s signed over %s', (requestUrl, signedUrl) => {
    const signature = twilio.getExpectedTwilioSignature(TOKEN, signedUrl, PARAMS);
    expect(validateTwilioSignature(TOKEN, signature, requestUrl, PARAMS)).toBe(true);
    // The reference agrees that these are the same request.
    expect(twilio.validateRequest(TOKEN, signature, requestUrl, PARAMS)).toBe(true);
  });

  it('adds the default port to a URL with no path, keeping the text as given', () => {
    // WHATWG URL would insert a `/` here, which Twilio did not sign.
    const signature = computeTwilioSignature(TOKEN, 'https://h.example:443?x=1', PARAMS);
    expect(validateTwilioSignature(TOKEN, signature, 'https://h.example?x=1', PARAMS)).toBe(true);
  });

  it.each([
    ['wss://h.example/media/twilio', 'wss://h.example:443/media/twilio'],
    ['wss://h.example:443/media/twilio', 'wss://h.example/media/twilio'],
    ['ws://h.example/media/twilio', 'ws://h.example:80/media/twilio'],
    ['wss://[::1]/media/twilio', 'wss://[::1]:443/media/twilio'],
  ])('accepts a WebSocket upgrade to %s signed over %s with no params', (requestUrl, signedUrl) => {
    const signature = twilio.getExpectedTwilioSignature(TOKEN, signedUrl, {});
    expect(validateTwilioSignature(TOKEN, signature, requestUrl, {})).toBe(true);
  });

  it('does not swap a non-default port for the default one', () => {
    const signature = twilio.getExpectedTwilioSignature(TOKEN, 'https://h.example/voice', PARAMS);
    expect(validateTwilioSignature(TOKEN, signature, 'https://h.example:8443/voice', PARAMS)).toBe(false);
    expect(validateTwilioSignature(TOKEN, signature, 'https://h.example:443/voice', PARAMS)).toBe(true);
  });

  it('rejects a tampered param, an added param and a removed param', () => {
    const signature = computeTwilioSignature(TOKEN, URL_PLAIN, PARAMS);
    expect(validateTwilioSignature(TOKEN, signature, URL_PLAIN, { ...PARAMS, To: '+18005551213' })).toBe(
      false,
    );
    expect(validateTwilioSignature(TOKEN, signature, URL_PLAIN, { ...PARAMS, Extra: '' })).toBe(false);
    const { Digits: _removed, ...rest } = PARAMS;
    expect(validateTwilioSignature(TOKEN, signature, URL_PLAIN, rest)).toBe(false);
  });

  it('rejects a different URL', () => {
    const signature = computeTwilioSignature(TOKEN, URL_PLAIN, PARAMS);
    expect(validateTwilioSignature(TOKEN, signature, `${URL_PLAIN}&tenant=b`, PARAMS)).toBe(false);
    expect(validateTwilioSignature(TOKEN, signature, URL_PLAIN.replace('https:', 'http:'), PARAMS)).toBe(
      false,
    );
  });

  it('rejects a signature made with another token', () => {
    const signature = twilio.getExpectedTwilioSignature('another-token', URL_PLAIN, PARAMS);
    expect(validateTwilioSignature(TOKEN, signature, URL_PLAIN, PARAMS)).toBe(false);
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['too short', 'abc'],
    ['too long', `${computeTwilioSignature(TOKEN, URL_PLAIN, PARAMS)}A`],
    ['non-ASCII of the right length', 'é'.repeat(28)],
    ['repeated', [computeTwilioSignature(TOKEN, URL_PLAIN, PARAMS)]],
  ])('returns false without throwing for a %s header', (_name, header) => {
    expect(validateTwilioSignature(TOKEN, header, URL_PLAIN, PARAMS)).toBe(false);
  });
});
