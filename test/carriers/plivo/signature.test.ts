// The expected signatures below were computed with a transcription of Plivo's own SDK algorithm
// (plivo-python, utils/signature_v3.py) run in Python, independently of the code under test.
import { describe, expect, it } from 'vitest';
import {
  computePlivoSignatureV3,
  plivoSignedUrl,
  verifyPlivoSignatureV3,
} from '../../../src/carriers/plivo/signature.js';
import { plivoV3Signature } from '../../helpers/plivo-carrier.js';

const TOKEN = 'plivo-auth-token-for-tests';
const ANSWER_URL = 'https://bridge.example.com/carriers/plivo/answer';
const ANSWER_PARAMS = {
  CallUUID: 'c1f7e3a0-1111-2222-3333-444455556666',
  From: '+15550001111',
  To: '+15550002222',
  Direction: 'inbound',
  CallStatus: 'ringing',
};

const VECTORS: Array<[string, Record<string, string | string[]>, string, string, string]> = [
  [
    ANSWER_URL,
    ANSWER_PARAMS,
    '12345678901234567890',
    'https://bridge.example.com/carriers/plivo/answer?CallStatusringingCallUUIDc1f7e3a0-1111-2222-3333-444455556666DirectioninboundFrom+15550001111To+15550002222',
    'plRt1TK1e01RkFHBTdCPlMjRPMqAETIdyrdVpAkLQhs=',
  ],
  [
    'https://bridge.example.com/carriers/plivo/transfer?to=%2B15550100&b=2&a=x+y',
    { CallUUID: 'abc', Event: 'Redirect' },
    'n0nce',
    'https://bridge.example.com/carriers/plivo/transfer?a=x y&b=2&to=+15550100.CallUUIDabcEventRedirect',
    'Rle1AzbqZRHTY+dBPd01erjwi0vViCsOsQY5nhR5+Lc=',
  ],
  [
    'https://bridge.example.com/carriers/plivo/transfer?to=%2B15550100',
    {},
    'n0nce',
    'https://bridge.example.com/carriers/plivo/transfer?to=+15550100',
    'EwqpZpeQZNO4dD+AQoro4mAYqgSG+ai2aKUGae52j4o=',
  ],
  [
    'https://bridge.example.com:8443/carriers/plivo/hangup',
    { K: ['b', 'a'], A: '1' },
    'xyz',
    'https://bridge.example.com:8443/carriers/plivo/hangup?A1KaKb',
    '3YXqf4HgV6qOiD6HYtycI+St6nUobo0x76ts1rx7x6w=',
  ],
];

describe('X-Plivo-Signature-V3', () => {
  for (const [url, params, nonce, signedUrl, signature] of VECTORS) {
    it(`matches Plivo's algorithm for ${signedUrl.slice(26, 70)}…`, () => {
      expect(plivoSignedUrl(url, params)).toBe(signedUrl);
      expect(computePlivoSignatureV3(TOKEN, url, params, nonce)).toBe(signature);
      expect(verifyPlivoSignatureV3({ authToken: TOKEN, signature, nonce, url, params })).toEqual({
        ok: true,
        nonce,
      });
    });
  }

  it('agrees with the test helper that signs requests', () => {
    expect(plivoV3Signature(TOKEN, ANSWER_URL, ANSWER_PARAMS, '12345678901234567890')).toBe(VECTORS[0]![4]);
  });

  const verify = (
    signature: string | string[] | undefined,
    nonce: string | string[] | undefined,
    params = ANSWER_PARAMS,
  ) => verifyPlivoSignatureV3({ authToken: TOKEN, signature, nonce, url: ANSWER_URL, params });
  const good = VECTORS[0]![4];
  const nonce = VECTORS[0]![2];

  it('accepts the signature anywhere among several comma-separated ones', () => {
    expect(verify(`AAAA,${good}`, nonce)).toEqual({ ok: true, nonce });
    expect(verify(`${good}, bm9wZQ==`, nonce)).toEqual({ ok: true, nonce });
  });

  it('refuses a changed parameter, another nonce, another token', () => {
    expect(verify(good, nonce, { ...ANSWER_PARAMS, To: '+15550009999' })).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(verify(good, 'another-nonce')).toEqual({ ok: false, reason: 'bad_signature' });
    const other = computePlivoSignatureV3('another-token', ANSWER_URL, ANSWER_PARAMS, nonce);
    expect(verify(other, nonce)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('names what is missing or malformed', () => {
    expect(verify(undefined, nonce)).toEqual({ ok: false, reason: 'missing' });
    expect(verify(good, undefined)).toEqual({ ok: false, reason: 'missing' });
    expect(verify('', nonce)).toEqual({ ok: false, reason: 'missing' });
    expect(verify([good, good], nonce)).toEqual({ ok: false, reason: 'malformed' });
    expect(verify(good, 'nonce with spaces')).toEqual({ ok: false, reason: 'malformed' });
    expect(verify(Array(20).fill(good).join(','), nonce)).toEqual({ ok: false, reason: 'malformed' });
  });
});
