// X-Plivo-Signature-V3 (docs/protocols/plivo.md section 7): base64(HMAC-SHA256(auth
// token, `<url>.<nonce>`)), the nonce in X-Plivo-Signature-V3-Nonce. For a POST, `<url>` is the URL
// without its query, then `?` and the query's parameters sorted (`k=v&…`), then `.` when there was
// a query, then the POST parameters sorted, as `key` + `value`. The header may hold several
// comma-separated signatures; any one may match.
import { createHmac, timingSafeEqual } from 'node:crypto';

export type PlivoParams = Record<string, string | string[]>;

export type PlivoSignatureCheck =
  { ok: true; nonce: string } | { ok: false; reason: 'missing' | 'malformed' | 'bad_signature' };

/** More signatures than this in one header is not Plivo. */
const MAX_SIGNATURES = 8;
const NONCE = /^[A-Za-z0-9+/=_-]{1,128}$/;

function sortedValues(value: string | string[]): string[] {
  return typeof value === 'string' ? [value] : [...value].sort();
}

/** `k=v&k2=v2` of the URL's own query, keys and each key's values sorted, decoded as given. */
function sortedQuery(search: string): string {
  const query: PlivoParams = {};
  for (const [key, value] of new URLSearchParams(search)) {
    const seen = query[key];
    query[key] = seen === undefined ? value : [...sortedValues(seen), value];
  }
  const parts: string[] = [];
  for (const key of Object.keys(query).sort()) {
    parts.push(
      sortedValues(query[key]!)
        .map((value) => `${key}=${value}`)
        .join('&'),
    );
  }
  return parts.join('&');
}

/** What Plivo signs for a POST to `url` with `params`, before `.<nonce>`. */
export function plivoSignedUrl(url: string, params: PlivoParams): string {
  const cut = url.search(/[?#]/);
  const base = cut === -1 ? url : url.slice(0, cut);
  const queryStart = url.indexOf('?');
  const hashStart = url.indexOf('#');
  const search =
    queryStart === -1 ? '' : url.slice(queryStart + 1, hashStart > queryStart ? hashStart : undefined);
  const query = sortedQuery(search);
  const hasParams = Object.keys(params).length > 0;
  let signed = base;
  if (query !== '' || hasParams) signed += `?${query}`;
  if (query !== '' && hasParams) signed += '.';
  for (const key of Object.keys(params).sort()) {
    for (const value of sortedValues(params[key]!)) signed += `${key}${value}`;
  }
  return signed;
}

export function computePlivoSignatureV3(
  authToken: string,
  url: string,
  params: PlivoParams,
  nonce: string,
): string {
  return createHmac('sha256', authToken)
    .update(`${plivoSignedUrl(url, params)}.${nonce}`, 'utf8')
    .digest('base64');
}

function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  // The expected length (44 base64 characters) is public: branching on it leaks nothing secret.
  return left.length === right.length && timingSafeEqual(left, right);
}

export function verifyPlivoSignatureV3(input: {
  authToken: string;
  signature: string | string[] | undefined;
  nonce: string | string[] | undefined;
  url: string;
  params: PlivoParams;
}): PlivoSignatureCheck {
  const { signature, nonce } = input;
  if (signature === undefined || nonce === undefined || signature === '' || nonce === '') {
    return { ok: false, reason: 'missing' };
  }
  if (typeof signature !== 'string' || typeof nonce !== 'string' || !NONCE.test(nonce)) {
    return { ok: false, reason: 'malformed' };
  }
  const candidates = signature.split(',').map((value) => value.trim());
  if (candidates.length > MAX_SIGNATURES) return { ok: false, reason: 'malformed' };
  const expected = computePlivoSignatureV3(input.authToken, input.url, input.params, nonce);
  // Every candidate is compared, so the time taken does not say which one matched.
  let valid = false;
  for (const candidate of candidates) if (safeEqual(candidate, expected)) valid = true;
  return valid ? { ok: true, nonce } : { ok: false, reason: 'bad_signature' };
}
