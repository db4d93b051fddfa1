// Basic auth on Exotel's media upgrade, with headers built by hand as Exotel builds them.
import { describe, expect, it } from 'vitest';
import {
  basicAuthMatches,
  upgradeCredentials,
  upgradePassword,
} from '../../../src/carriers/exotel/upgrade-auth.js';

const KEY = 'exotel-api-key';
const TOKEN = 'exotel-api-token-secret-0001';
const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('exotel upgrade auth', () => {
  const { username, password } = upgradeCredentials(KEY, TOKEN);

  it('hands out the API key and a password derived from the token, never the token', () => {
    expect(username).toBe(KEY);
    expect(password).not.toContain(TOKEN);
    expect(password).toBe(upgradePassword(TOKEN));
    expect(password).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(upgradePassword('another-token')).not.toBe(password);
  });

  it('accepts exactly those credentials', () => {
    expect(basicAuthMatches(basic(username, password), username, password)).toBe(true);
    expect(
      basicAuthMatches(
        `basic   ${Buffer.from(`${username}:${password}`).toString('base64')}`,
        username,
        password,
      ),
    ).toBe(true);
  });

  const refusals: Array<[string, string | string[] | undefined]> = [
    ['no header', undefined],
    ['a repeated header', [basic(KEY, password), basic(KEY, password)]],
    ['a bearer token', `Bearer ${password}`],
    ['the raw API token', basic(KEY, TOKEN)],
    ['another user', basic('someone', password)],
    ['a password one character short', basic(KEY, password.slice(0, -1))],
    ['no password', basic(KEY, '')],
    ['not base64', 'Basic !!!'],
    ['a huge header', `Basic ${'A'.repeat(5000)}`],
  ];
  for (const [name, header] of refusals) {
    it(`refuses ${name}`, () => {
      expect(basicAuthMatches(header, username, password)).toBe(false);
    });
  }
});
