// A contact's time zone: the one given, else the number's, else the campaign's. A number's zone is
// its country's when the country has exactly one (countries-and-timezones); for the United States
// and Canada it comes from the area code (nanp-zones.ts); any other country spanning several zones
// (Russia, Brazil, Australia, Mexico, Spain with the Canaries, …) gives none, and the campaign's
// zone applies: a wrong guess would call people outside their hours.
import ct from 'countries-and-timezones';
import { IANAZone } from 'luxon';
import { nanpZone } from './nanp-zones.js';

/** The canonical spelling of an IANA zone name, or null when there is no such zone. */
export function ianaZone(name: string): string | null {
  const text = name.trim();
  // Offsets like "UTC+3" or "+03:00" parse in luxon, but a fixed offset ignores daylight saving.
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+){0,2}$/.test(text) || text.length > 64) return null;
  if (!IANAZone.isValidZone(text)) return null;
  return new Intl.DateTimeFormat('en-US', { timeZone: text }).resolvedOptions().timeZone;
}

export function zoneOfNumber(country: string | null, nationalNumber: string): string | null {
  if (country === null) return null;
  if (country === 'US' || country === 'CA') return nanpZone(nationalNumber);
  const zones = ct.getCountry(country)?.timezones ?? [];
  return zones.length === 1 ? zones[0]! : null;
}
