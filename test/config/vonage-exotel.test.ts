import { generateKeyPairSync } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { isSecretName } from '../../src/config/env.js';
import { configErrorOf, load, makeProject, removeProjects } from './project.js';

afterEach(removeProjects);

const APP_ID = '11111111-2222-4333-8444-555555555555';
const RSA_PEM = generateKeyPairSync('rsa', { modulusLength: 2048 })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();
const EC_PEM = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();
// Production needs Twilio's credentials whatever else is set.
const PRODUCTION = {
  NODE_ENV: 'production',
  TWILIO_ACCOUNT_SID: `AC${'0123456789abcdef'.repeat(2)}`,
  TWILIO_AUTH_TOKEN: 'twilio-token',
};

describe('Vonage variables', () => {
  it('default to no credentials and the public API', () => {
    expect(load({}).vonage).toEqual({
      applicationId: null,
      privateKey: null,
      signatureSecrets: [],
      apiKey: null,
      apiUrl: 'https://api.nexmo.com',
    });
  });

  it('read the application, key, secrets and API URL', () => {
    const config = load({
      VONAGE_APPLICATION_ID: APP_ID,
      VONAGE_PRIVATE_KEY: RSA_PEM,
      VONAGE_SIGNATURE_SECRET: 'secret-one, secret-two',
      VONAGE_API_KEY: 'abcd1234',
      VONAGE_API_URL: 'http://127.0.0.1:4010/',
    });
    expect(config.vonage).toEqual({
      applicationId: APP_ID,
      // Environment values are trimmed; a PEM reads the same without its last newline.
      privateKey: RSA_PEM.trim(),
      signatureSecrets: ['secret-one', 'secret-two'],
      apiKey: 'abcd1234',
      apiUrl: 'http://127.0.0.1:4010',
    });
  });

  it('read a PEM written on one line with \\n escapes', () => {
    const oneLine = RSA_PEM.trim().replace(/\n/g, '\\n');
    expect(load({ VONAGE_APPLICATION_ID: APP_ID, VONAGE_PRIVATE_KEY: oneLine }).vonage.privateKey).toBe(
      RSA_PEM.trim(),
    );
  });

  it('read the private key from a file path, relative to the project', () => {
    const root = makeProject({ 'secrets/vonage.key': RSA_PEM });
    const config = load({ VONAGE_APPLICATION_ID: APP_ID, VONAGE_PRIVATE_KEY: 'secrets/vonage.key' }, root);
    expect(config.vonage.privateKey).toBe(RSA_PEM);
  });

  const errors: Array<[string, Record<string, string>, RegExp]> = [
    [
      'an application id that is not a UUID',
      { VONAGE_APPLICATION_ID: 'my-app' },
      /^VONAGE_APPLICATION_ID: must be a UUID, got "my-app"$/,
    ],
    [
      'a key path that does not exist',
      { VONAGE_APPLICATION_ID: APP_ID, VONAGE_PRIVATE_KEY: 'nope/missing.key' },
      /^VONAGE_PRIVATE_KEY: is neither PEM text nor the path of a readable file$/,
    ],
    [
      'a key that is not RSA',
      { VONAGE_APPLICATION_ID: APP_ID, VONAGE_PRIVATE_KEY: EC_PEM },
      /^VONAGE_PRIVATE_KEY: must hold an RSA private key in PEM$/,
    ],
    [
      'a PEM that does not parse',
      {
        VONAGE_APPLICATION_ID: APP_ID,
        VONAGE_PRIVATE_KEY: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----',
      },
      /^VONAGE_PRIVATE_KEY: must hold an RSA private key in PEM$/,
    ],
    [
      'a private key without the application',
      { VONAGE_PRIVATE_KEY: RSA_PEM },
      /^VONAGE_APPLICATION_ID: required when VONAGE_PRIVATE_KEY is set$/,
    ],
    [
      'an API key with odd characters',
      { VONAGE_API_KEY: 'ab cd' },
      /^VONAGE_API_KEY: must be 1 to 32 letters and digits/,
    ],
    [
      'an API URL with a query',
      { VONAGE_API_URL: 'https://api.nexmo.com/?x=1' },
      /^VONAGE_API_URL: must be an http or https URL/,
    ],
    ['an API URL with another scheme', { VONAGE_API_URL: 'ftp://api.nexmo.com' }, /^VONAGE_API_URL: /],
  ];
  for (const [name, env, message] of errors) {
    it(`refuses ${name} in one line`, () => {
      expect(configErrorOf(() => load(env)).message).toMatch(message);
    });
  }

  it('never quotes the private key or the signature secret', () => {
    const garbage = '-----BEGIN PRIVATE KEY-----\nSECRETSECRET\n-----END PRIVATE KEY-----';
    expect(
      configErrorOf(() => load({ VONAGE_APPLICATION_ID: APP_ID, VONAGE_PRIVATE_KEY: garbage })).message,
    ).not.toContain('SECRETSECRET');
    expect(isSecretName('VONAGE_PRIVATE_KEY')).toBe(true);
    expect(isSecretName('VONAGE_SIGNATURE_SECRET')).toBe(true);
    expect(isSecretName('VONAGE_APPLICATION_ID')).toBe(false);
  });

  it('refuse production when Vonage is configured without a signature secret', () => {
    expect(configErrorOf(() => load({ ...PRODUCTION, VONAGE_APPLICATION_ID: APP_ID })).message).toMatch(
      /^VONAGE_SIGNATURE_SECRET: required when NODE_ENV=production and Vonage is configured/,
    );
    expect(
      load({ ...PRODUCTION, VONAGE_APPLICATION_ID: APP_ID, VONAGE_SIGNATURE_SECRET: 's' }).vonage
        .applicationId,
    ).toBe(APP_ID);
  });

  it('let production start with no Vonage variables (its webhooks are then refused)', () => {
    expect(load(PRODUCTION).vonage.signatureSecrets).toEqual([]);
  });
});

describe('Exotel variables', () => {
  it('default to no credentials and the public API', () => {
    expect(load({}).exotel).toEqual({
      accountSid: null,
      apiKey: null,
      apiToken: null,
      apiUrl: 'https://api.exotel.com',
      flowUrl: null,
      allowedCidrs: null,
    });
  });

  it('read the account, key, token and API URL', () => {
    const config = load({
      EXOTEL_ACCOUNT_SID: 'acme1',
      EXOTEL_API_KEY: 'key.one',
      EXOTEL_FLOW_URL: 'http://my.exotel.com/acme1/exoml/start_voice/42',
      EXOTEL_API_TOKEN: 'tok!en',
      EXOTEL_API_URL: 'https://api.in.exotel.com',
    });
    expect(config.exotel).toEqual({
      accountSid: 'acme1',
      apiKey: 'key.one',
      apiToken: 'tok!en',
      apiUrl: 'https://api.in.exotel.com',
      flowUrl: 'http://my.exotel.com/acme1/exoml/start_voice/42',
      allowedCidrs: null,
    });
  });

  const errors: Array<[string, Record<string, string>, RegExp]> = [
    [
      'an account sid with odd characters',
      { EXOTEL_ACCOUNT_SID: 'a/b' },
      /^EXOTEL_ACCOUNT_SID: must be 1 to 64 letters/,
    ],
    [
      'an API key with a colon (it is the Basic auth user)',
      { EXOTEL_API_KEY: 'a:b', EXOTEL_API_TOKEN: 't' },
      /^EXOTEL_API_KEY: must be 1 to 128/,
    ],
    [
      'a token with a space',
      { EXOTEL_API_KEY: 'k', EXOTEL_API_TOKEN: 'a b' },
      /^EXOTEL_API_TOKEN: must be 1 to 256 printable characters without spaces$/,
    ],
    [
      'a key without a token',
      { EXOTEL_API_KEY: 'k' },
      /^EXOTEL_API_TOKEN: required when EXOTEL_API_KEY is set$/,
    ],
    [
      'a token without a key',
      { EXOTEL_API_TOKEN: 't' },
      /^EXOTEL_API_KEY: required when EXOTEL_API_TOKEN is set$/,
    ],
    ['an API URL with a fragment', { EXOTEL_API_URL: 'https://api.exotel.com/#x' }, /^EXOTEL_API_URL: /],
    ['a flow URL that is not http(s)', { EXOTEL_FLOW_URL: 'ftp://my.exotel.com/flow' }, /^EXOTEL_FLOW_URL: /],
    ['a flow URL that is no URL', { EXOTEL_FLOW_URL: 'start_voice/42' }, /^EXOTEL_FLOW_URL: /],
  ];
  for (const [name, env, message] of errors) {
    it(`refuses ${name} in one line`, () => {
      expect(configErrorOf(() => load(env)).message).toMatch(message);
    });
  }

  it('never quotes the API token', () => {
    expect(
      configErrorOf(() => load({ EXOTEL_API_KEY: 'k', EXOTEL_API_TOKEN: 'SECRET TOKEN' })).message,
    ).not.toContain('SECRET');
    expect(isSecretName('EXOTEL_API_TOKEN')).toBe(true);
  });

  it('refuse production with an account but no credentials for the media upgrade', () => {
    expect(configErrorOf(() => load({ ...PRODUCTION, EXOTEL_ACCOUNT_SID: 'acme1' })).message).toMatch(
      /^EXOTEL_API_KEY: required when NODE_ENV=production and EXOTEL_ACCOUNT_SID is set/,
    );
    expect(load(PRODUCTION).exotel.accountSid).toBeNull();
  });

  it('read EXOTEL_ALLOWED_CIDRS as addresses and CIDRs of either family', () => {
    expect(
      load({ EXOTEL_ALLOWED_CIDRS: ' 203.0.113.0/24, 198.51.100.7 ,2001:db8::/32' }).exotel.allowedCidrs,
    ).toEqual(['203.0.113.0/24', '198.51.100.7', '2001:db8::/32']);
  });

  it.each([
    [
      'a host name',
      'exotel.com',
      /^EXOTEL_ALLOWED_CIDRS: each entry must be an IP address or CIDR, got "exotel.com"$/,
    ],
    [
      'a prefix too long',
      '10.0.0.0/33',
      /^EXOTEL_ALLOWED_CIDRS: each entry must be an IP address or CIDR, got "10.0.0.0\/33"$/,
    ],
    ['two slashes', '10.0.0.0/8/8', /^EXOTEL_ALLOWED_CIDRS: each entry must be an IP address or CIDR/],
    ['only commas', ' , ,', /^EXOTEL_ALLOWED_CIDRS: must name at least one IP address or CIDR$/],
  ])('refuse EXOTEL_ALLOWED_CIDRS with %s in one line', (_, value, message) => {
    const error = configErrorOf(() => load({ EXOTEL_ALLOWED_CIDRS: value })).message;
    expect(error).toMatch(message);
    expect(error).not.toContain('\n');
  });
});
