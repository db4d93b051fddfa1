// One cell of an exported CSV, made safe to open in a spreadsheet (docs/security.md, "CSV export").
// Every column of every export goes through here: contacts' phones as they were written, variables,
// summaries and notes all come from outside, and a cell a spreadsheet reads as a formula can run
// commands or leak data (the OWASP "CSV injection" payloads).

/** A plain number, such as -12.5 or an E.164 phone +14155550123: no spreadsheet runs it. */
const PLAIN_NUMBER = /^[+-]?\d+(?:[.,]\d+)?$/;
/** What starts a formula, even after leading spaces: = + - @, and a tab or carriage return. */
const FORMULA_START = /^[\s\u00a0]*[=+\-@\uff1d\uff0b\uff0d\uff20]|^[\t\r]/;

/**
 * The cell as written when it is a plain number or starts with nothing a spreadsheet would run;
 * else prefixed with a single quote, which spreadsheets show as text and do not evaluate.
 */
export function safeCell(value: string): string {
  if (PLAIN_NUMBER.test(value)) return value;
  return FORMULA_START.test(value) ? `'${value}` : value;
}
