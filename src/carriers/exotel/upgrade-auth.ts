// Basic auth on Exotel's media upgrade (docs/protocols/exotel.md): the wss URL we hand out carries
// `user:password@`, and Exotel sends it back as `Authorization: Basic`. Exotel signs none of its
// requests, so this and the stream token in the URL's path are all that authenticate a stream.
//
// The credentials are per call: derived from the stream token the same URL carries, so a leaked URL
// opens that call's stream only, and only once (the token is single-use). No account secret is in
// them: the URL may be the answer to an unverified request.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

const LABEL = 'callbridge exotel media upgrade v2';
/** The user name of every media URL: the password is what is per call. */
export const UPGRADE_USERNAME = 'exotel';
const BASIC = /^Basic +([A-Za-z0-9+/]+={0,2})$/i;
const MAX_HEADER_CHARS = 1024;

/** The URL's user and password for the stream that presents `streamToken`. */
export function upgradeCredentials(
  secret: string,
  streamToken: string,
): { username: string; password: string } {
  const password = createHmac('sha256', `${LABEL}:${secret}`).update(streamToken).digest('base64url');
  return { username: UPGRADE_USERNAME, password };
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
