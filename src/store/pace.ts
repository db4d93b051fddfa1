// A campaign's pace: the one rule both store adapters apply, inside the atomic step that begins an
// attempt, so every instance sharing the store shares one pace.
//
// Two limits, both on the dials' start times:
//   - an even grid: dial n takes the slot 1000/cps after dial n-1's, so the rate over any stretch is
//     never above the pace. A dial that comes late by less than a second (timers, store round
//     trips, a busy machine) keeps its grid slot, so lateness does not add up and the dials after
//     it catch up, within the second limit below; one later than that (a lull, the cap, no contact
//     due) starts the grid again from now, so a lull is never made up for;
//   - a sliding second: never more than `mostPerSecond(cps)` dials whose start times lie within
//     1000 ms of each other, whatever the grid and whatever the clocks of the instances.
// A fractional pace above one (2.5) is held to its whole part in any second (2): a carrier counts
// whole calls per second, and an operator who sets 2.5 expects never a third in one second.

/** What the store keeps between dials of one campaign. */
export interface PaceState {
  /** The grid slot of the last dial (ms, may be fractional). */
  slotMs: number;
  /** Start times of the last dials, oldest first, at most `mostPerSecond(cps)` of them. */
  recentMs: number[];
}

export type PaceDecision = { ok: true; state: PaceState } | { ok: false; waitMs: number };

const SECOND_MS = 1_000;

/** The most dials any one-second window may hold at `callsPerSecond`. */
export const mostPerSecond = (callsPerSecond: number) => Math.max(1, Math.floor(callsPerSecond));

/**
 * Whether a dial may begin at `nowMs`: the state after it, or how long to wait before asking again.
 * `state` null is a campaign that has not dialed yet.
 */
export function takePaceSlot(state: PaceState | null, nowMs: number, callsPerSecond: number): PaceDecision {
  const most = mostPerSecond(callsPerSecond);
  if (state === null) return { ok: true, state: { slotMs: nowMs, recentMs: [nowMs] } };
  const intervalMs = SECOND_MS / callsPerSecond;
  const nextSlotMs = state.slotMs + intervalMs;
  const recent = state.recentMs.slice(-most);
  const secondFreeAtMs = recent.length < most ? -Infinity : recent[0]! + SECOND_MS;
  const allowedAtMs = Math.max(nextSlotMs, secondFreeAtMs);
  if (nowMs < allowedAtMs) return { ok: false, waitMs: Math.max(1, Math.ceil(allowedAtMs - nowMs)) };
  const slotMs = nowMs - nextSlotMs < SECOND_MS ? nextSlotMs : nowMs;
  return { ok: true, state: { slotMs, recentMs: [...recent, nowMs].slice(-most) } };
}

/** The stored form, read back; anything unreadable counts as no dial yet. */
export function readPaceState(text: string | null): PaceState | null {
  if (text === null || text === '') return null;
  try {
    const state = JSON.parse(text) as PaceState;
    if (typeof state.slotMs !== 'number' || !Array.isArray(state.recentMs)) return null;
    return state;
  } catch {
    return null;
  }
}

export const writePaceState = (state: PaceState) => JSON.stringify(state);
