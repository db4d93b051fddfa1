// What `callbridge doctor` prints: one line per check, `ok`, `warn` or `FAIL` first, and an exit
// code that only failures move (a warning is worth reading, not worth failing a deploy over).

export type CheckStatus = 'ok' | 'warn' | 'fail';

export interface CheckLine {
  status: CheckStatus;
  text: string;
  /**
   * Set on a failure to reach a host (refused, unknown, silent): the lines that share a host and a
   * cause are one problem, said once (mergeUnreachable).
   */
  reach?: { host: string; cause: string; role: string };
}

export const ok = (text: string): CheckLine => ({ status: 'ok', text });
export const warn = (text: string): CheckLine => ({ status: 'warn', text });
export const fail = (text: string): CheckLine => ({ status: 'fail', text });

const LABELS: Readonly<Record<CheckStatus, string>> = Object.freeze({ ok: 'ok', warn: 'warn', fail: 'FAIL' });

export function formatLine(line: CheckLine): string {
  return `${LABELS[line.status].padEnd(4)} ${line.text}`;
}

/** A FAIL line for `role` at `url` that could not be reached because of `cause`. */
export function unreachable(role: string, url: string, cause: string, text: string): CheckLine {
  return { status: 'fail', text, reach: { host: new URL(url).host, cause, role } };
}

/**
 * One line per unreachable host and cause: the voice agent, the speech API and the model listing
 * on one dead host are one problem, not three. A host only one check uses keeps its own line.
 */
export function mergeUnreachable(lines: readonly CheckLine[]): CheckLine[] {
  const groups = new Map<string, CheckLine[]>();
  for (const line of lines) {
    if (!line.reach) continue;
    const key = `${line.reach.host} ${line.reach.cause}`;
    groups.set(key, [...(groups.get(key) ?? []), line]);
  }
  const merged: CheckLine[] = [];
  for (const line of lines) {
    const group = line.reach ? groups.get(`${line.reach.host} ${line.reach.cause}`)! : [line];
    if (group.length === 1) merged.push(line);
    else if (group[0] === line) {
      const roles = group.map((l) => l.reach!.role).join(', ');
      merged.push(fail(`${line.reach!.host} (${roles}): ${line.reach!.cause}`));
    }
  }
  return merged;
}

/** 0 when nothing failed, 1 otherwise. */
export function exitCodeOf(lines: readonly CheckLine[]): 0 | 1 {
  return lines.some((line) => line.status === 'fail') ? 1 : 0;
}
