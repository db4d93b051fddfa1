// What every simulated callee shares, whatever carrier plays it: how long detection takes to hear
// each kind of answer, how long a person or a voicemail stays on the line, and how a callee learns
// that the server hung up through the API.
import type { SimCallLog } from '../carrier-api/call-log.js';

export const CALLBACK_TIMEOUT_MS = 10_000;
/** How long after the answer detection takes to hear a person (docs/protocols/answering-machine-detection.md: 2-4 s). */
export const HUMAN_VERDICT_MS = 2_500;
export const UNSURE_VERDICT_MS = 6_000;
export const FAX_VERDICT_MS = 2_000;
/** Detection calls a greeting a machine's this long after the media starts (in real time: a greeting is not sped up). */
export const MACHINE_VERDICT_MS = 2_000;
/** Detection calls the greeting ended a moment after the beep stops. */
export const BEEP_SETTLE_MS = 300;
/** A voicemail records until the server hangs up, up to this long. */
export const VOICEMAIL_RECORD_MS = 90_000;
/** How long a person stays on the line after speaking, at time scale 1. */
export const PERSON_HOLD_MS = 8_000;

/** Aborted once the server hangs the answered call up through the API (within a voicemail's time). */
export function serverHangup(calls: SimCallLog, callSid: string): AbortSignal {
  const hangup = new AbortController();
  void calls
    .waitFor(callSid, (c) => c.state === 'ended', VOICEMAIL_RECORD_MS * 2)
    .then((c) => c?.state === 'ended' && hangup.abort());
  return hangup.signal;
}

/** Resolves true once the server has hung the call up through the API, false after `ms`. */
export async function hungUpWithin(calls: SimCallLog, callSid: string, ms: number): Promise<boolean> {
  const call = await calls.waitFor(callSid, (c) => c.state === 'ended', Math.max(0, ms));
  return call?.state === 'ended';
}
