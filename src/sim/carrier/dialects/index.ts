// The carriers `callbridge call --carrier <name>` and `callbridge bench --carrier <name>` can play:
// one line per dialect.
import type { SimDialect } from '../dialect.js';
import { twilioDialect } from './twilio.js';

export const SIM_DIALECTS: readonly SimDialect[] = Object.freeze([twilioDialect]);

export const DEFAULT_DIALECT = twilioDialect;

export function dialectNames(): string[] {
  return SIM_DIALECTS.map((dialect) => dialect.name);
}

export function findDialect(name: string): SimDialect | undefined {
  return SIM_DIALECTS.find((dialect) => dialect.name === name);
}
