// Basic auth on Exotel's media upgrade (docs/protocols/exotel.md): the wss URL we hand out carries
// `user:password@`, and Exotel sends it back as `Authorization: Basic`. Exotel signs none of its
// requests, so this and the stream token in the URL's path are all that authenticate a stream.
//
// The password is derived from the API token, never the token itself: the URL is the answer to an
// unauthenticated request, and the API token would let its reader use the account's REST API.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

const LABEL = 'callbridge exotel media upgrade v1';
const BASIC = /^Basic +([A-Za-z0-9+/]+={0,2})$/i;
const MAX_HEADER_CHARS = 1024;

export function upgradePassword(apiToken: string): string {
  return createHmac('sha256', apiToken).update(LABEL).digest('base64url');
}

/** The URL's user and password, as Exotel is to present them. */
export function upgradeCredentials(apiKey: string, apiToken: string): { username: string; password: string } {
  return { username: apiKey, password: upgradePassword(apiToken) };
}

/** Whether `header` is Basic auth with exactly these credentials; constant-time in their content. */
export function basicAuthMatches(
  header: string | string[] | undefined,
  username: string,
  password: string,
): boolean {
  if (typeof header !== 'string' || header.length > MAX_HEADER_CHARS) return false;
  const match = BASIC.exec(header.trim());
  if (match === null) return false;
  const given = Buffer.from(match[1]!, 'base64');
  // Digests are compared, so neither length nor content of the expected value shows in the time taken.
  const digest = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest();
  return timingSafeEqual(digest(given), digest(`${username}:${password}`));
}
