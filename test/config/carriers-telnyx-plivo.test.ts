// Telnyx's and Plivo's variables: defaults, forms, and one line naming the variable per bad value.
import { generateKeyPairSync } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { envError, isSecretName } from '../../src/config/env.js';
import { configErrorOf, load, removeProjects } from './project.js';

afterEach(removeProjects);

const SID = `AC${'0123456789abcdef'.repeat(2)}`;
const PRODUCTION = { NODE_ENV: 'production', TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: 'tok' };

function publicKeyBase64(): string {
  const jwk = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' });
  return Buffer.from(jwk.x!, 'base64url').toString('base64');
}

describe('Telnyx variables', () => {
  it('defaults to no credentials, the public API and PCMU', () => {
    expect(load({}).telnyx).toEqual({
      apiKey: null,
      publicKeys: [],
      connectionId: null,
      apiUrl: 'https://api.telnyx.com',
      streamCodec: 'PCMU',
      refuseUnverified: false,
    });
  });

  it('reads every variable', () => {
    const key = publicKeyBase64();
    const config = load({
      TELNYX_API_KEY: 'KEY0123',
      TELNYX_PUBLIC_KEY: key,
      TELNYX_CONNECTION_ID: '1293384261075731499',
      TELNYX_API_URL: 'http://127.0.0.1:9999/',
      TELNYX_STREAM_CODEC: 'L16',
    });
    expect(config.telnyx).toEqual({
      apiKey: 'KEY0123',
      publicKeys: [key],
      connectionId: '1293384261075731499',
      apiUrl: 'http://127.0.0.1:9999',
      streamCodec: 'L16',
      refuseUnverified: false,
    });
  });

  it('takes several public keys during a rotation', () => {
    const [a, b] = [publicKeyBase64(), publicKeyBase64()];
    expect(load({ TELNYX_PUBLIC_KEY: `${a}, ${b}` }).telnyx.publicKeys).toEqual([a, b]);
  });

  it('refuses a public key that is not 32 bytes of base64', () => {
    const short = Buffer.alloc(31, 1).toString('base64');
    expect(configErrorOf(() => load({ TELNYX_PUBLIC_KEY: short })).message).toBe(
      `TELNYX_PUBLIC_KEY: must be the base64 of a 32-byte Ed25519 public key, got "${short}"`,
    );
    expect(configErrorOf(() => load({ TELNYX_PUBLIC_KEY: 'not base64!' })).message).toMatch(
      /^TELNYX_PUBLIC_KEY: /,
    );
    const pem = '-----BEGIN PUBLIC KEY-----';
    expect(configErrorOf(() => load({ TELNYX_PUBLIC_KEY: pem })).message).toMatch(/^TELNYX_PUBLIC_KEY: /);
  });

  it('refuses a codec Telnyx streams that callbridge does not carry', () => {
    expect(configErrorOf(() => load({ TELNYX_STREAM_CODEC: 'OPUS' })).message).toBe(
      'TELNYX_STREAM_CODEC: must be one of PCMU, PCMA, L16, got "OPUS"',
    );
  });

  it('refuses a connection id with odd characters, and an API URL with a query', () => {
    expect(configErrorOf(() => load({ TELNYX_CONNECTION_ID: 'a b' })).message).toMatch(
      /^TELNYX_CONNECTION_ID: /,
    );
    expect(configErrorOf(() => load({ TELNYX_API_URL: 'https://api.telnyx.com?x=1' })).message).toMatch(
      /^TELNYX_API_URL: /,
    );
  });

  it('counts the API key and the Plivo token as secrets, never quoted in errors', () => {
    expect(isSecretName('TELNYX_API_KEY')).toBe(true);
    expect(isSecretName('PLIVO_AUTH_TOKEN')).toBe(true);
    expect(envError('TELNYX_API_KEY', 'is wrong', 'KEY-SECRET').message).toBe('TELNYX_API_KEY: is wrong');
  });

  it('refuses, in production, an API key or connection without the public key', () => {
    expect(configErrorOf(() => load({ ...PRODUCTION, TELNYX_API_KEY: 'k' })).message).toMatch(
      /^TELNYX_PUBLIC_KEY: required when NODE_ENV=production/,
    );
    expect(configErrorOf(() => load({ ...PRODUCTION, TELNYX_CONNECTION_ID: '12' })).message).toMatch(
      /^TELNYX_PUBLIC_KEY: /,
    );
    expect(
      load({ ...PRODUCTION, TELNYX_API_KEY: 'k', TELNYX_PUBLIC_KEY: publicKeyBase64() }).telnyx.apiKey,
    ).toBe('k');
    // With nothing of Telnyx set, production starts and refuses Telnyx's webhooks.
    expect(load(PRODUCTION).telnyx).toMatchObject({ publicKeys: [], refuseUnverified: true });
    const verified = load({ ...PRODUCTION, TELNYX_PUBLIC_KEY: publicKeyBase64() }).telnyx;
    expect(verified.refuseUnverified).toBe(false);
  });
});

describe('Plivo variables', () => {
  it('defaults to no credentials and the public API', () => {
    expect(load({}).plivo).toEqual({
      authId: null,
      authToken: null,
      apiUrl: 'https://api.plivo.com',
      refuseUnverified: false,
    });
  });

  it('reads every variable', () => {
    const config = load({
      PLIVO_AUTH_ID: 'MAXXXXXXXXXXXXXXXXXX',
      PLIVO_AUTH_TOKEN: 'plivo-token',
      PLIVO_API_URL: 'http://127.0.0.1:9998',
    });
    expect(config.plivo).toEqual({
      authId: 'MAXXXXXXXXXXXXXXXXXX',
      authToken: 'plivo-token',
      apiUrl: 'http://127.0.0.1:9998',
      refuseUnverified: false,
    });
  });

  it('refuses Plivo requests in production when no token is set', () => {
    expect(load(PRODUCTION).plivo.refuseUnverified).toBe(true);
    const config = load({ ...PRODUCTION, PLIVO_AUTH_ID: 'MAXXXXXXXXXXXXXXXXXX', PLIVO_AUTH_TOKEN: 't' });
    expect(config.plivo.refuseUnverified).toBe(false);
  });

  it('wants the Auth ID and token together', () => {
    expect(configErrorOf(() => load({ PLIVO_AUTH_ID: 'MAXXXXXXXXXXXXXXXXXX' })).message).toBe(
      'PLIVO_AUTH_TOKEN: required when PLIVO_AUTH_ID is set',
    );
    expect(configErrorOf(() => load({ PLIVO_AUTH_TOKEN: 'plivo-secret-token' })).message).toBe(
      'PLIVO_AUTH_ID: required when PLIVO_AUTH_TOKEN is set',
    );
  });

  it('refuses an Auth ID that could not be one, without quoting the token', () => {
    const message = configErrorOf(() =>
      load({ PLIVO_AUTH_ID: 'MA/../x', PLIVO_AUTH_TOKEN: 'plivo-secret-token' }),
    ).message;
    expect(message).toMatch(/^PLIVO_AUTH_ID: must be the account Auth ID/);
    expect(message).not.toContain('plivo-secret-token');
  });

  it('refuses a bad API URL', () => {
    expect(configErrorOf(() => load({ PLIVO_API_URL: 'ftp://api.plivo.com' })).message).toMatch(
      /^PLIVO_API_URL: must be an http or https URL/,
    );
  });
});
