// Signed webhooks are checked against tokens made with the `jsonwebtoken` package, independently of
// the project's own code.
import { createHash } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { describe, expect, it } from 'vitest';
import { verifyVonageSignature } from '../../../src/carriers/vonage/signature.js';

const SECRET = 'vonage-signature-secret-for-tests-0001';
const OLD_SECRET = 'vonage-signature-secret-retired-0000';
const APP_ID = '11111111-2222-4333-8444-555555555555';
const API_KEY = 'abcd1234';
const NOW_MS = 1_750_000_000_000;
const BODY: Buffer = Buffer.from('{"uuid":"x","status":"answered"}');

const sha256 = (body: Buffer | string) => createHash('sha256').update(body).digest('hex');

function sign(
  claims: Record<string, unknown> = {},
  opts: { secret?: string; algorithm?: jwt.Algorithm } = {},
) {
  // jsonwebtoken keeps a given iat, and leaves it out only with noTimestamp.
  const noTimestamp = 'iat' in claims && claims.iat === undefined;
  const payload = {
    iss: 'Vonage',
    api_key: API_KEY,
    application_id: APP_ID,
    payload_hash: sha256(BODY),
    iat: Math.floor(NOW_MS / 1000),
    jti: 'b2f6c9e0-0000-4000-8000-000000000001',
    ...claims,
  };
  // A claim set to undefined is left out, as the JSON of the token would have it.
  return jwt.sign(JSON.parse(JSON.stringify(payload)) as Record<string, unknown>, opts.secret ?? SECRET, {
    algorithm: opts.algorithm ?? 'HS256',
    noTimestamp,
  });
}

const verify = (
  header: string | string[] | undefined,
  body = BODY,
  overrides: Partial<Parameters<typeof verifyVonageSignature>[2]> = {},
) =>
  verifyVonageSignature(header, body, {
    secrets: [SECRET],
    applicationId: APP_ID,
    apiKey: API_KEY,
    toleranceMs: 300_000,
    nowMs: NOW_MS,
    ...overrides,
  });

describe('vonage signed webhooks', () => {
  it('accepts a token signed with the secret over this body', async () => {
    const result = await verify(`Bearer ${sign()}`);
    expect(result.ok).toBe(true);
  });

  it('accepts any of several secrets during rotation', async () => {
    const result = await verify(`Bearer ${sign({}, { secret: SECRET })}`, BODY, {
      secrets: [OLD_SECRET, SECRET],
    });
    expect(result.ok).toBe(true);
  });

  it('accepts a GET signed over the empty body, with or without the hash claim', async () => {
    expect((await verify(`Bearer ${sign({ payload_hash: sha256('') })}`, Buffer.alloc(0))).ok).toBe(true);
    expect((await verify(`Bearer ${sign({ payload_hash: undefined })}`, Buffer.alloc(0))).ok).toBe(true);
  });

  it('accepts iat within the tolerance either way', async () => {
    expect((await verify(`Bearer ${sign({ iat: Math.floor(NOW_MS / 1000) - 299 })}`)).ok).toBe(true);
    expect((await verify(`Bearer ${sign({ iat: Math.floor(NOW_MS / 1000) + 299 })}`)).ok).toBe(true);
  });

  const refusals: Array<[string, () => string | string[] | undefined, string, Buffer?]> = [
    ['no header', () => undefined, 'missing'],
    ['a repeated header', () => [`Bearer ${sign()}`, `Bearer ${sign()}`], 'missing'],
    ['another scheme', () => `Basic ${sign()}`, 'missing'],
    ['an empty bearer', () => 'Bearer ', 'missing'],
    ['a token that is not a JWT', () => 'Bearer not-a-jwt', 'malformed'],
    ['a token with garbage parts', () => 'Bearer a.b.c', 'malformed'],
    ['a huge token', () => `Bearer ${'a'.repeat(5000)}.b.c`, 'malformed'],
    [
      'another secret (forged)',
      () => `Bearer ${sign({}, { secret: 'forged-secret-forged-secret-0000' })}`,
      'bad_signature',
    ],
    ['HS512 with the right secret', () => `Bearer ${sign({}, { algorithm: 'HS512' })}`, 'bad_signature'],
    ['alg none', () => `Bearer ${jwt.sign({ iat: NOW_MS / 1000 }, '', { algorithm: 'none' })}`, 'malformed'],
    [
      'an iat too old (replayed)',
      () => `Bearer ${sign({ iat: Math.floor(NOW_MS / 1000) - 301 })}`,
      'expired',
    ],
    ['an iat in the future', () => `Bearer ${sign({ iat: Math.floor(NOW_MS / 1000) + 400 })}`, 'expired'],
    ['no iat', () => `Bearer ${sign({ iat: undefined })}`, 'malformed'],
    ['a passed exp', () => `Bearer ${sign({ exp: Math.floor(NOW_MS / 1000) - 10 })}`, 'expired'],
    ['the hash of another body', () => `Bearer ${sign({ payload_hash: sha256('{}') })}`, 'payload_mismatch'],
    ['a hash that is not hex', () => `Bearer ${sign({ payload_hash: 'zz' })}`, 'payload_mismatch'],
    ['no hash over a body', () => `Bearer ${sign({ payload_hash: undefined })}`, 'payload_mismatch'],
    [
      'a hash over an empty GET body that names a body',
      () => `Bearer ${sign()}`,
      'payload_mismatch',
      Buffer.alloc(0),
    ],
    [
      'another application',
      () => `Bearer ${sign({ application_id: '99999999-2222-4333-8444-555555555555' })}`,
      'wrong_application',
    ],
    ['another account', () => `Bearer ${sign({ api_key: 'other999' })}`, 'wrong_application'],
  ];

  for (const [name, header, reason, body] of refusals) {
    it(`refuses ${name}`, async () => {
      const result = await verify(header(), body ?? BODY);
      expect(result).toEqual({ ok: false, reason });
    });
  }

  it('does not check the application or account when none is configured', async () => {
    const header = `Bearer ${sign({ application_id: 'someone-else', api_key: 'other' })}`;
    expect((await verify(header, BODY, { applicationId: null, apiKey: null })).ok).toBe(true);
  });

  it('refuses everything when no secret verifies it', async () => {
    expect(await verify(`Bearer ${sign()}`, BODY, { secrets: [] })).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
  });
});
