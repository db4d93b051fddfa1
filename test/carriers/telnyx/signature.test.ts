// Signatures here are made with node:crypto directly, independently of the code under test.
import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { importTelnyxPublicKeys, verifyTelnyxSignature } from '../../../src/carriers/telnyx/signature.js';

function keyPair(): { privateKey: KeyObject; publicBase64: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const jwk = publicKey.export({ format: 'jwk' });
  return { privateKey, publicBase64: Buffer.from(jwk.x!, 'base64url').toString('base64') };
}

const NOW_MS = 1_760_000_000_000;
const NOW_S = String(NOW_MS / 1000);
const BODY = Buffer.from('{"data":{"event_type":"call.initiated","payload":{"call_control_id":"v3:abc"}}}');

function signed(privateKey: KeyObject, timestamp: string, body: Buffer): string {
  return sign(null, Buffer.concat([Buffer.from(`${timestamp}|`), body]), privateKey).toString('base64');
}

describe('telnyx webhook signature', () => {
  const account = keyPair();
  const keys = importTelnyxPublicKeys([account.publicBase64]);
  const check = (
    signature: string | string[] | undefined,
    timestamp: string | string[] | undefined,
    body = BODY,
  ) => verifyTelnyxSignature(keys, { signature, timestamp, rawBody: body, nowMs: NOW_MS });

  it('accepts a signature over timestamp|body', () => {
    expect(check(signed(account.privateKey, NOW_S, BODY), NOW_S)).toEqual({ ok: true });
  });

  it('accepts timestamps up to 300 s away either way, and no further', () => {
    const old = String(NOW_MS / 1000 - 300);
    expect(check(signed(account.privateKey, old, BODY), old)).toEqual({ ok: true });
    const tooOld = String(NOW_MS / 1000 - 301);
    expect(check(signed(account.privateKey, tooOld, BODY), tooOld)).toEqual({ ok: false, reason: 'expired' });
    const future = String(NOW_MS / 1000 + 301);
    expect(check(signed(account.privateKey, future, BODY), future)).toEqual({ ok: false, reason: 'expired' });
  });

  it('refuses a body changed by one byte', () => {
    const sig = signed(account.privateKey, NOW_S, BODY);
    const changed = Buffer.from(BODY);
    changed[10] = changed[10]! ^ 1;
    expect(check(sig, NOW_S, changed)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('refuses a signature whose timestamp was swapped', () => {
    const sig = signed(account.privateKey, NOW_S, BODY);
    const other = String(NOW_MS / 1000 - 1);
    expect(check(sig, other)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it("refuses another account's signature", () => {
    const other = keyPair();
    expect(check(signed(other.privateKey, NOW_S, BODY), NOW_S)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
  });

  it('accepts any of several keys (rotation)', () => {
    const next = keyPair();
    const both = importTelnyxPublicKeys([account.publicBase64, next.publicBase64]);
    const result = verifyTelnyxSignature(both, {
      signature: signed(next.privateKey, NOW_S, BODY),
      timestamp: NOW_S,
      rawBody: BODY,
      nowMs: NOW_MS,
    });
    expect(result).toEqual({ ok: true });
  });

  it('names what is missing or malformed', () => {
    const sig = signed(account.privateKey, NOW_S, BODY);
    expect(check(undefined, NOW_S)).toEqual({ ok: false, reason: 'missing' });
    expect(check(sig, undefined)).toEqual({ ok: false, reason: 'missing' });
    expect(check('', NOW_S)).toEqual({ ok: false, reason: 'missing' });
    expect(check([sig, sig], NOW_S)).toEqual({ ok: false, reason: 'malformed' });
    expect(check(sig, 'yesterday')).toEqual({ ok: false, reason: 'malformed' });
    expect(check(sig, '1e9')).toEqual({ ok: false, reason: 'malformed' });
    expect(check('bm9wZQ==', NOW_S)).toEqual({ ok: false, reason: 'malformed' });
    expect(check('!!!', NOW_S)).toEqual({ ok: false, reason: 'malformed' });
  });
});
