// A call's states, the moves each allows, and what each state holds (docs/call-session.md). The
// session keeps one `Phase` and moves it only where this table allows.
import type { EndReason } from '../record/end-reason.js';
import type { Ending } from './endings.js';
import type { LinkLostInfo } from './agent-link.js';

/**
 * Call states and the moves each allows. `finishing` is a polite end under way (an `Ending` of
 * endings.ts: a goodbye, a transfer, a voicemail, the fallback): no second one starts. Only a
 * failed transfer leaves it other than by ending, back to the state it came from.
 */
export const CALL_TRANSITIONS = Object.freeze({
  connecting: ['live', 'reconnecting', 'finishing', 'ending'],
  live: ['reconnecting', 'finishing', 'ending'],
  reconnecting: ['live', 'finishing', 'ending'],
  finishing: ['connecting', 'live', 'reconnecting', 'ending'],
  ending: ['ended'],
  ended: [],
} as const satisfies Record<string, readonly string[]>);

export type CallState = keyof typeof CALL_TRANSITIONS;

/** The states in which an agent carries the call, or is being dialed to. */
type Carrying = 'connecting' | 'live' | 'reconnecting';

/** The agent went away while a transfer was under way: decided on once the transfer fails. */
type AgentGone = { lost: LinkLostInfo } | { unavailable: EndReason };

/** The state and what it holds: the ending under way, or the reason recorded. */
export type Phase =
  | { state: Carrying }
  | { state: 'finishing'; ending: Ending; from: Carrying; agentGone: AgentGone | null }
  | { state: 'ending' | 'ended'; reason: EndReason };

export function canMove(from: CallState, to: CallState): boolean {
  const allowed: readonly string[] = CALL_TRANSITIONS[from];
  return allowed.includes(to);
}
