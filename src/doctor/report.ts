// What `callbridge doctor` prints: one line per check, `ok`, `warn` or `FAIL` first, and an exit
// code that only failures move (a warning is worth reading, not worth failing a deploy over).

export type CheckStatus = 'ok' | 'warn' | 'fail';

export interface CheckLine {
  status: CheckStatus;
  text: string;
}

export const ok = (text: string): CheckLine => ({ status: 'ok', text });
export const warn = (text: string): CheckLine => ({ status: 'warn', text });
export const fail = (text: string): CheckLine => ({ status: 'fail', text });

const LABELS: Readonly<Record<CheckStatus, string>> = Object.freeze({ ok: 'ok', warn: 'warn', fail: 'FAIL' });

export function formatLine(line: CheckLine): string {
  return `${LABELS[line.status].padEnd(4)} ${line.text}`;
}

/** 0 when nothing failed, 1 otherwise. */
export function exitCodeOf(lines: readonly CheckLine[]): 0 | 1 {
  return lines.some((line) => line.status === 'fail') ? 1 : 0;
}
