// Basic auth on Exotel's media upgrade, with headers built by hand as Exotel builds them. The
// credentials are one call's: derived from the stream token its URL carries.
import { describe, expect, it } from 'vitest';
import { basicAuthMatches, upgradeCredentials } from '../../../src/carriers/exotel/upgrade-auth.js';

const SECRET = 'stream-token-secret-of-the-upgrade-auth-test';
const TOKEN = 'v1.eyJjYWxsIjoiMSJ9.c2lnbmF0dXJl';
const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('exotel upgrade auth', () => {
  const { username, password } = upgradeCredentials(SECRET, TOKEN);

  it('hands out a password of this call only, derived from its token, never the secret', () => {
    expect(username).toBe('exotel');
    expect(password).not.toContain(SECRET);
    expect(password).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(upgradeCredentials(SECRET, `${TOKEN}x`).password).not.toBe(password);
    expect(upgradeCredentials('another-secret', TOKEN).password).not.toBe(password);
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
    ['a repeated header', [basic(username, password), basic(username, password)]],
    ['a bearer token', `Bearer ${password}`],
    ['another call’s password', basic(username, upgradeCredentials(SECRET, `${TOKEN}x`).password)],
    ['another user', basic('someone', password)],
    ['a password one character short', basic(username, password.slice(0, -1))],
    ['no password', basic(username, '')],
    ['not base64', 'Basic !!!'],
    ['a huge header', `Basic ${'A'.repeat(5000)}`],
  ];
  for (const [name, header] of refusals) {
    it(`refuses ${name}`, () => {
      expect(basicAuthMatches(header, username, password)).toBe(false);
    });
  }
});
