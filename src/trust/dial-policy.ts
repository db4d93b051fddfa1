// The dial policy (docs/security.md, "Dial and fetch policies"): whether a number may be dialed or a
// call transferred to it. Every place a number leaves the server asks here: a single call, a
// campaign's contacts and caller IDs, and every transfer. Emergency numbers, short codes and
// satellite numbers are never dialed; the rest follows DIAL_ALLOWED_COUNTRIES, DIAL_BLOCKED_TYPES
// and DIAL_BLOCKED_PREFIXES. The number types are libphonenumber-js's (full metadata).
import { parsePhoneNumberFromString, validatePhoneNumberLength } from 'libphonenumber-js/max';
import { DEFAULT_BLOCKED_TYPES, type DialPolicyConfig } from '../config/trust-policies.js';
import type { AgentProfile } from '../config/types.js';
import { DialBlockedError } from '../errors.js';

export type DialVerdict = { ok: true } | { ok: false; reason: string };

/**
 * Emergency and public-safety short codes around the world (libphonenumber-js carries no short-number
 * data, so they are listed here). Matched against the digits after the country code, and against the
 * whole of a SIP user part, so `+1 911`, `+44 999` and `sip:112@gateway` are all refused.
 */
// prettier-ignore
export const EMERGENCY_NUMBERS: ReadonlySet<string> = new Set([
  '000', '08', '061', '062', '10111', '100', '101', '102', '103', '106', '108', '110', '112',
  '113', '114', '115', '117', '118', '119', '122', '123', '125', '127', '128', '131', '132', '133',
  '15', '150', '155', '160', '166', '17', '18', '190', '191', '192', '193', '194', '197', '199',
  '911', '933', '995', '997', '998', '999', '1122', '1155', '1669',
]);

/**
 * Satellite networks: Inmarsat (+870, and +871 to +874 before it), the Global Mobile Satellite System
 * (+881: Iridium, Globalstar, …) and Thuraya (+882 16). Billed per minute at many times a mobile rate.
 */
const SATELLITE_PREFIXES = ['+870', '+871', '+872', '+873', '+874', '+881', '+88216'];

/** A short code has at most this many digits after the country code (a full number has more). */
const MAX_SHORT_CODE_DIGITS = 6;

const TYPE_NAMES: Readonly<Record<string, string>> = {
  PREMIUM_RATE: 'a premium-rate number',
  TOLL_FREE: 'a toll-free number',
  SHARED_COST: 'a shared-cost number',
  VOIP: 'a VoIP number',
  PERSONAL_NUMBER: 'a personal number',
  PAGER: 'a pager number',
  UAN: 'a universal access number',
  VOICEMAIL: 'a voicemail access number',
  FIXED_LINE: 'a fixed-line number',
  MOBILE: 'a mobile number',
  FIXED_LINE_OR_MOBILE: 'a fixed-line or mobile number',
};

export const DEFAULT_DIAL_POLICY: DialPolicyConfig = {
  allowedCountries: null,
  blockedTypes: [...DEFAULT_BLOCKED_TYPES],
  blockedPrefixes: [],
};

const refuse = (reason: string): DialVerdict => ({ ok: false, reason });

/** A SIP user part with its escapes decoded (`%2B1900…` is `+1900…`); as written when they are broken. */
function decodedUser(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

export class DialPolicy {
  readonly #config: DialPolicyConfig;

  constructor(config: DialPolicyConfig = DEFAULT_DIAL_POLICY) {
    this.#config = config;
  }

  /** Whether `target` (E.164, or a `sip:`/`sips:` address) may be dialed, and if not, why. */
  check(target: string): DialVerdict {
    const sip = /^sips?:([^@;?]*)/i.exec(target);
    if (sip) {
      const user = decodedUser(sip[1]!).replace(/[\s().-]/g, '');
      // A SIP address reaches a gateway or a PBX: only a phone number in it is this policy's business.
      if (user.startsWith('+')) return this.#checkNumber(user);
      if (/^\d+$/.test(user) && EMERGENCY_NUMBERS.has(user)) return refuse(`${user} is an emergency number`);
      return { ok: true };
    }
    return this.#checkNumber(target.replace(/[\s().-]/g, ''));
  }

  /** Throws DialBlockedError naming `field` and the rule when `target` may not be dialed. */
  assert(target: string, field: string): void {
    const verdict = this.check(target);
    if (!verdict.ok) throw new DialBlockedError(`${field}: ${verdict.reason}`);
  }

  #checkNumber(number: string): DialVerdict {
    if (!/^\+\d{1,15}$/.test(number)) return refuse(`${number.slice(0, 20)} is not an E.164 number`);
    const parsed = parsePhoneNumberFromString(number);
    const national = parsed?.nationalNumber ?? '';
    if (EMERGENCY_NUMBERS.has(number.slice(1)) || EMERGENCY_NUMBERS.has(national)) {
      return refuse(`${number} is an emergency number`);
    }
    if (SATELLITE_PREFIXES.some((prefix) => number.startsWith(prefix))) {
      return refuse(`${number} is a satellite number`);
    }
    if (!parsed) return refuse(`${number} is not a number any country's plan knows`);
    if (national.length <= MAX_SHORT_CODE_DIGITS && validatePhoneNumberLength(number) === 'TOO_SHORT') {
      return refuse(`${number} is a short code, not a full number`);
    }
    const prefix = this.#config.blockedPrefixes.find((p) => number.startsWith(p));
    if (prefix !== undefined) return refuse(`${number} starts with ${prefix} (DIAL_BLOCKED_PREFIXES)`);
    const type = parsed.getType();
    if (type !== undefined && (this.#config.blockedTypes as readonly string[]).includes(type)) {
      return refuse(`${number} is ${TYPE_NAMES[type] ?? type} (DIAL_BLOCKED_TYPES)`);
    }
    const allowed = this.#config.allowedCountries;
    if (allowed !== null) {
      // A number libphonenumber cannot place in one country is placed by its calling code's.
      const countries = parsed.country ? [parsed.country] : parsed.getPossibleCountries();
      if (!countries.some((country) => allowed.includes(country))) {
        const where = countries.length > 0 ? `in ${countries.join(' or ')}` : 'in no known country';
        return refuse(`${number} is ${where}, not in DIAL_ALLOWED_COUNTRIES`);
      }
    }
    return { ok: true };
  }
}

/**
 * The first number a profile may transfer to (its `transfer.allow` list, its fallback's
 * `transferTo`) that the policy refuses, as a one-line configuration problem; null when none is.
 * Checked at start, so an agent is never offered a transfer the policy would refuse mid-call.
 */
export function profileTargetsProblem(
  profiles: Readonly<Record<string, AgentProfile>>,
  policy: DialPolicy,
): string | null {
  for (const [name, profile] of Object.entries(profiles)) {
    const targets = [
      ...profile.builtins.transferAllowList.map((target, i) => [`transfer.allow[${i}]`, target] as const),
      ...(profile.fallback.transferTo ? [['fallback.transferTo', profile.fallback.transferTo] as const] : []),
    ];
    for (const [field, target] of targets) {
      const verdict = policy.check(target);
      if (!verdict.ok) return `profile ${name}: ${field}: ${verdict.reason}, refused by the dial policy`;
    }
  }
  return null;
}
