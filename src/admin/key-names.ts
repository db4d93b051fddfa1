// What a key may be called (docs/security.md, "Keys"). A name is what the audit log, the console and
// `callbridge keys list` show of a key, so it must read as what it is: printable (no control,
// format or bidirectional-override characters, which can make a terminal line or a table cell
// show something else), unique regardless of case, and never one of the names the server itself
// audits under (`admin-token`, `cli`).
import { ADMIN_TOKEN_NAME, CLI_NAME } from './principal.js';

export const MAX_KEY_NAME_CHARS = 80;
const RESERVED = new Set([ADMIN_TOKEN_NAME, CLI_NAME]);
/** Control (Cc), format (Cf: bidi overrides, zero-width), line and paragraph separators, unassigned. */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cn}\p{Co}\p{Cs}]/u;

/** The name as kept: outer white space trimmed. */
export function normaliseKeyName(name: string): string {
  return name.trim();
}

export interface KeyNameProblem {
  /** `invalid`: no key may be called so; `taken`: another key is. */
  kind: 'invalid' | 'taken';
  message: string;
}

/** Why `name` (normalised) cannot name a new key, or null; `taken` are the names already in use. */
export function keyNameProblem(name: string, taken: readonly string[]): KeyNameProblem | null {
  const invalid = (message: string): KeyNameProblem => ({ kind: 'invalid', message });
  if (name.length === 0 || [...name].length > MAX_KEY_NAME_CHARS) {
    return invalid(`name must be 1 to ${MAX_KEY_NAME_CHARS} characters`);
  }
  if (UNPRINTABLE.test(name)) {
    return invalid('name must be printable: no control or bidirectional-override characters');
  }
  const folded = name.toLowerCase();
  if (RESERVED.has(folded)) return invalid(`name ${JSON.stringify(name)} is reserved`);
  if (taken.some((other) => other.toLowerCase() === folded)) {
    return { kind: 'taken', message: `a key named ${JSON.stringify(name)} already exists` };
  }
  return null;
}

/**
 * A stored name as one safe line for a terminal: names made before these rules (or written to the
 * store by other means) have their unprintable characters shown as \u{…} escapes.
 */
export function printableKeyName(name: string): string {
  return name.replace(new RegExp(UNPRINTABLE.source, 'gu'), (char) => {
    return `\\u{${char.codePointAt(0)!.toString(16)}}`;
  });
}
