// Exotel writes phone numbers the way they are dialed in India (`0XXXXXXXXXX`, docs/protocols/
// exotel.md), while number routing is keyed by E.164. Numbers read as Indian unless they carry
// their own country code; anything that is not a valid number is kept as written.
import { parsePhoneNumberFromString } from 'libphonenumber-js';

const MAX_CHARS = 32;

export function exotelE164(value: string): string {
  if (value === '' || value.length > MAX_CHARS) return value;
  const parsed = parsePhoneNumberFromString(value, 'IN');
  return parsed?.isValid() ? parsed.number : value;
}
