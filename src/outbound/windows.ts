// Calling windows: per weekday, from `start` to `end` in the contact's local time. Local wall-clock
// time is read through luxon in the contact's IANA zone, so a window means the same hours on both
// sides of a daylight-saving change; a window that opens in the hour a spring-forward skips opens
// when the clocks land (02:30 → 03:30).
import { DateTime } from 'luxon';
import { type CallingWindow, WEEKDAYS } from '../store/campaign-records.js';

const HHMM = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** Minutes after midnight of `HH:MM`; `24:00` is 1440. Null when not a time of day. */
export function minutesOfDay(text: string): number | null {
  if (text === '24:00') return 1440;
  const match = HHMM.exec(text);
  return match ? Number(match[1]) * 60 + Number(match[2]) : null;
}

/** Why a window is not usable, or null. Checked when a campaign is created. */
export function windowProblem(window: CallingWindow): string | null {
  const start = minutesOfDay(window.start);
  const end = minutesOfDay(window.end);
  if (start === null || start === 1440) return 'start must be a time of day, HH:MM from 00:00 to 23:59';
  if (end === null) return 'end must be a time of day, HH:MM from 00:01 to 24:00';
  if (end <= start) {
    return 'end must be after start; split a window that crosses midnight in two (…–24:00 and 00:00–…)';
  }
  return null;
}

function openAtLocal(windows: readonly CallingWindow[], local: DateTime): boolean {
  const day = WEEKDAYS[local.weekday - 1]!;
  const minute = local.hour * 60 + local.minute;
  return windows.some(
    (w) => w.days.includes(day) && minute >= minutesOfDay(w.start)! && minute < minutesOfDay(w.end)!,
  );
}

/** True when a contact in `zone` may be called at `atMs`. No windows: any time. */
export function isWindowOpen(windows: readonly CallingWindow[], zone: string, atMs: number): boolean {
  if (windows.length === 0) return true;
  return openAtLocal(windows, DateTime.fromMillis(atMs, { zone }));
}

/**
 * The first instant at or after `atMs` when a window is open in `zone`: `atMs` itself when one is
 * open now. Null only when the windows name no day at all.
 */
export function nextOpening(windows: readonly CallingWindow[], zone: string, atMs: number): number | null {
  if (windows.length === 0) return atMs;
  const local = DateTime.fromMillis(atMs, { zone });
  if (openAtLocal(windows, local)) return atMs;
  const today = local.startOf('day');
  // A week ahead covers every weekday; one more day covers "later today" on the same weekday.
  for (let offset = 0; offset <= 7; offset++) {
    const date = today.plus({ days: offset });
    const day = WEEKDAYS[date.weekday - 1]!;
    const starts = windows
      .filter((w) => w.days.includes(day))
      .map((w) => minutesOfDay(w.start)!)
      .sort((a, b) => a - b);
    for (const start of starts) {
      const opening = DateTime.fromObject(
        {
          year: date.year,
          month: date.month,
          day: date.day,
          hour: Math.floor(start / 60),
          minute: start % 60,
        },
        { zone },
      );
      const ms = opening.toMillis();
      if (ms > atMs && openAtLocal(windows, opening)) return ms;
    }
  }
  return null;
}
