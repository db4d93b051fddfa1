// The dial and fetch policies' variables (docs/security.md, "Dial and fetch policies"): which
// numbers may be dialed or transferred to, and which hosts a server-side fetch of a caller's URL may
// reach besides public addresses. Each bad value is a one-line error naming the variable.
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { isSupportedCountry, type NumberType } from 'libphonenumber-js/max';
import { type Env, envError, envList } from './env.js';

/** libphonenumber-js's number types, as `DIAL_BLOCKED_TYPES` may name them. */
export const NUMBER_TYPES = [
  'PREMIUM_RATE',
  'TOLL_FREE',
  'SHARED_COST',
  'VOIP',
  'PERSONAL_NUMBER',
  'PAGER',
  'UAN',
  'VOICEMAIL',
  'FIXED_LINE',
  'MOBILE',
  'FIXED_LINE_OR_MOBILE',
] as const satisfies readonly NonNullable<NumberType>[];
export type BlockedNumberType = (typeof NUMBER_TYPES)[number];

/**
 * Refused unless `DIAL_BLOCKED_TYPES` says otherwise: numbers billed to the caller at a premium.
 * PERSONAL_NUMBER is among them because the UK's 070 "personal numbers" are billed like premium
 * ones and are a known toll-fraud target.
 */
export const DEFAULT_BLOCKED_TYPES: readonly BlockedNumberType[] = [
  'PREMIUM_RATE',
  'SHARED_COST',
  'PERSONAL_NUMBER',
];

export interface DialPolicyConfig {
  /** ISO 3166 alpha-2 codes a dialed number must belong to; null: any country. */
  allowedCountries: string[] | null;
  blockedTypes: BlockedNumberType[];
  /** E.164 prefixes (`+44 9` as `+449`) never dialed. */
  blockedPrefixes: string[];
}

export interface FetchPolicyConfig {
  /** Host names (lower case, no trailing dot) fetched whatever address they resolve to. */
  allowedHosts: string[];
  /** Addresses and networks (`10.0.0.0/8`, `192.0.2.7`) fetched although not public. */
  allowedCidrs: string[];
}

const E164_PREFIX = /^\+[1-9]\d{0,14}$/;
const HOST_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

export function readDialPolicy(env: Env): DialPolicyConfig {
  const countries = envList(env, 'DIAL_ALLOWED_COUNTRIES').map((entry) => entry.toUpperCase());
  for (const country of countries) {
    if (!/^[A-Z]{2}$/.test(country) || !isSupportedCountry(country)) {
      throw envError(
        'DIAL_ALLOWED_COUNTRIES',
        'each entry must be an ISO 3166 alpha-2 country code',
        country,
      );
    }
  }
  const typesSet = env.DIAL_BLOCKED_TYPES !== undefined;
  const types = envList(env, 'DIAL_BLOCKED_TYPES').map((entry) => entry.toUpperCase());
  for (const type of types) {
    if (!(NUMBER_TYPES as readonly string[]).includes(type)) {
      throw envError('DIAL_BLOCKED_TYPES', `each entry must be one of ${NUMBER_TYPES.join(', ')}`, type);
    }
  }
  const prefixes = envList(env, 'DIAL_BLOCKED_PREFIXES').map((entry) => entry.replace(/[\s().-]/g, ''));
  for (const prefix of prefixes) {
    if (!E164_PREFIX.test(prefix)) {
      throw envError('DIAL_BLOCKED_PREFIXES', 'each entry must be + and 1 to 15 digits', prefix);
    }
  }
  return {
    allowedCountries: countries.length > 0 ? [...new Set(countries)] : null,
    // Set to nothing (`DIAL_BLOCKED_TYPES=`), no type is refused; unset, the default ones are.
    blockedTypes: typesSet ? [...new Set(types as BlockedNumberType[])] : [...DEFAULT_BLOCKED_TYPES],
    blockedPrefixes: [...new Set(prefixes)],
  };
}

export function readFetchPolicy(env: Env): FetchPolicyConfig {
  const allowedHosts: string[] = [];
  const allowedCidrs: string[] = [];
  for (const entry of envList(env, 'FETCH_ALLOWED_HOSTS')) {
    const cidr = cidrOf(entry);
    if (cidr !== null) allowedCidrs.push(cidr);
    else if (isHostName(entry)) allowedHosts.push(entry.toLowerCase().replace(/\.$/, ''));
    else {
      throw envError('FETCH_ALLOWED_HOSTS', 'each entry must be a host name, an IP address or a CIDR', entry);
    }
  }
  return { allowedHosts, allowedCidrs };
}

/** The entry as a CIDR when it is an address (written the usual way) or a network; else null. */
function cidrOf(entry: string): string | null {
  const [address = '', prefix, extra] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return null;
  if (prefix === undefined) return `${address}/${family === 4 ? 32 : 128}`;
  if (!/^\d{1,3}$/.test(prefix) || !ipaddr.isValidCIDR(entry)) return null;
  return entry;
}

/** A DNS name; all-numeric or hexadecimal names are refused, since URL parsers read them as IPv4. */
function isHostName(entry: string): boolean {
  const name = entry.toLowerCase().replace(/\.$/, '');
  if (name.length === 0 || name.length > 253) return false;
  const labels = name.split('.');
  if (!labels.every((label) => HOST_LABEL.test(label))) return false;
  return !/^(0x[0-9a-f]*|\d+)$/.test(labels.at(-1)!);
}
