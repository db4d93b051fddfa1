// Phone numbers as contacts and caller IDs give them: E.164, or national with a country. Validated
// with libphonenumber-js's full metadata (number plans per country), never a regex.
import { isSupportedCountry, parsePhoneNumberFromString } from 'libphonenumber-js/max';

export type PhoneCheck =
  { ok: true; e164: string; country: string | null; nationalNumber: string } | { ok: false; reason: string };

/** Longer than any number written with spaces and punctuation: not worth parsing. */
const MAX_PHONE_CHARS = 40;

/** `country` is ISO 3166 alpha-2 in either case; returns it upper-cased, or null when unknown. */
export function phoneCountry(country: string): string | null {
  const code = country.trim().toUpperCase();
  return /^[A-Z]{2}$/.test(code) && isSupportedCountry(code) ? code : null;
}

/** The number in E.164 with its country, or why it is not a number one can dial. */
export function normalizePhone(raw: string, country?: string): PhoneCheck {
  const text = raw.trim();
  if (text === '') return { ok: false, reason: 'phone is empty' };
  if (text.length > MAX_PHONE_CHARS || /[\p{Cc}]/u.test(text)) {
    return { ok: false, reason: 'phone is not a phone number' };
  }
  let defaultCountry: string | null = null;
  if (!text.startsWith('+')) {
    if (country === undefined || country.trim() === '') {
      return { ok: false, reason: 'phone is not in E.164 (+ and the country code); add a country column' };
    }
    defaultCountry = phoneCountry(country);
    if (defaultCountry === null) return { ok: false, reason: 'country is not an ISO 3166 country code' };
  }
  const parsed = parsePhoneNumberFromString(text, {
    ...(defaultCountry ? { defaultCountry: defaultCountry as never } : {}),
    extract: false,
  });
  if (!parsed || parsed.ext !== undefined || !parsed.isValid()) {
    return { ok: false, reason: 'phone is not a valid number' };
  }
  return {
    ok: true,
    e164: parsed.number,
    country: parsed.country ?? null,
    nationalNumber: parsed.nationalNumber,
  };
}
