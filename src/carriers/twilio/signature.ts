// X-Twilio-Signature (docs/protocols/twilio.md): base64(HMAC-SHA1(auth token, URL + sorted params)).
import { createHmac } from 'node:crypto';
import { constantTimeEqual } from '../../auth.js';

export type TwilioParams = Record<string, string | string[]>;

const DEFAULT_PORTS: Readonly<Record<string, string>> = Object.freeze({
  'https:': '443',
  'wss:': '443',
  'http:': '80',
  'ws:': '80',
});

/**
 * Keys sorted by code unit; a repeated key contributes key+value once per distinct value, values
 * sorted, which is what Twilio's own helper libraries sign and check.
 */
export function computeTwilioSignature(authToken: string, url: string, params: TwilioParams): string {
  let data = url;
  for (const key of Object.keys(params).sort()) {
    const value = params[key];
    if (typeof value === 'string') {
      data += key + value;
    } else if (value !== undefined) {
      for (const item of Array.from(new Set(value)).sort()) data += key + item;
    }
  }
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

/**
 * The URL as given plus its default-port twin: Twilio may sign with or without `:443`/`:80`
 * depending on how the webhook was configured. String surgery, because WHATWG URL drops a default
 * port and re-encodes the path, and the signature is over the exact text.
 */
function urlVariants(url: string): string[] {
  const schemeEnd = url.indexOf('://');
  if (schemeEnd <= 0) return [url];
  const defaultPort = DEFAULT_PORTS[url.slice(0, schemeEnd + 1).toLowerCase()];
  if (defaultPort === undefined) return [url];
  const authorityStart = schemeEnd + 3;
  let authorityEnd = url.length;
  for (const delimiter of ['/', '?', '#']) {
    const at = url.indexOf(delimiter, authorityStart);
    if (at !== -1 && at < authorityEnd) authorityEnd = at;
  }
  const authority = url.slice(authorityStart, authorityEnd);
  const head = url.slice(0, authorityStart);
  const tail = url.slice(authorityEnd);
  const hostStart = authority.lastIndexOf('@') + 1;
  const portMatch = /:(\d*)$/.exec(authority.slice(hostStart));
  if (portMatch === null) return [url, `${head}${authority}:${defaultPort}${tail}`];
  if (portMatch[1] !== defaultPort) return [url];
  return [url, `${head}${authority.slice(0, authority.length - portMatch[0].length)}${tail}`];
}

export function validateTwilioSignature(
  authToken: string,
  signatureHeader: string | string[] | undefined,
  url: string,
  params: TwilioParams,
): boolean {
  // A repeated header arrives as an array: Twilio sends one, so anything else is not Twilio.
  if (typeof signatureHeader !== 'string' || signatureHeader === '') return false;
  let valid = false;
  // Every variant is checked so the time taken does not reveal which one matched.
  for (const candidate of urlVariants(url)) {
    if (constantTimeEqual(signatureHeader, computeTwilioSignature(authToken, candidate, params)))
      valid = true;
  }
  return valid;
}
