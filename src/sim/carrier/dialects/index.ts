// The carriers `callbridge call --carrier <name>` and `callbridge bench --carrier <name>` can play:
// one line per dialect.
import type { SimDialect } from '../dialect.js';
import { exotelDialect } from './exotel.js';
import { plivoDialect } from './plivo.js';
import { telnyxDialect } from './telnyx.js';
import { twilioDialect } from './twilio.js';
import { vonageDialect } from './vonage.js';

export const SIM_DIALECTS: readonly SimDialect[] = Object.freeze([
  twilioDialect,
  telnyxDialect,
  plivoDialect,
  vonageDialect,
  exotelDialect,
]);

export const DEFAULT_DIALECT = twilioDialect;

export function dialectNames(): string[] {
  return SIM_DIALECTS.map((dialect) => dialect.name);
}

export function findDialect(name: string): SimDialect | undefined {
  return SIM_DIALECTS.find((dialect) => dialect.name === name);
}
