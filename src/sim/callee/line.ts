// How one carrier tells the server about an outbound call the simulated callee answers, or not: its
// progress and final-status callbacks, its detection verdict, and the dialect that plays the
// answered call (src/sim/carrier/dialects/). One file per carrier under lines/; answer.ts runs the
// call the same way for every carrier.
import type { PlacedSimCall } from '../carrier-api/handler.js';
import type { SimDialect } from '../carrier/dialect.js';
import type { Callee } from './plan.js';
import type { CalleeSounds } from './sounds.js';

/** The call's progress before its end, in the common words. */
export type CalleeProgress = 'initiated' | 'ringing' | 'in-progress';
/** How the call ended, in the common words (src/carriers/call-status.ts). */
export type CalleeFinal = 'completed' | 'busy' | 'no-answer' | 'failed' | 'canceled';

/** A verdict the carrier's detection posts, and how long after the media starts flowing. */
export interface PlannedVerdict {
  /** The carrier's word, for the result (`machine_end_beep`, `Machine=true`, …). */
  word: string;
  afterMs: number;
  post(): Promise<void>;
}

export interface CalleeLine {
  readonly dialect: SimDialect;
  /** A progress callback, where the carrier sends one. */
  progress(word: CalleeProgress): Promise<void>;
  /** The final status callback; `durationS` counts from the answer. */
  final(word: CalleeFinal, durationS: number): Promise<void>;
  /** What the carrier's detection concludes about this callee, in order; none when not asked for. */
  verdicts(callee: Callee, sounds: CalleeSounds, timeScale: number): PlannedVerdict[];
}

export interface CalleeLineContext {
  call: PlacedSimCall;
  /** The server's webhook secrets, named as its environment names them: callbacks are signed with them. */
  env: Record<string, string | undefined>;
  timeoutMs: number;
}

export type CalleeLineFactory = (context: CalleeLineContext) => CalleeLine;

/** The SIP response a carrier reports for each way a call ends unanswered. */
export const SIP_CODES: Readonly<Record<CalleeFinal, string | null>> = Object.freeze({
  completed: null,
  busy: '486',
  'no-answer': '480',
  failed: '404',
  canceled: null,
});

/** Posts a callback; a carrier does not retry one the server missed, and neither does the simulation. */
export async function postCallback(
  url: string | null,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<void> {
  if (url === null) return;
  try {
    const res = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
  } catch {
    // Lost: the server learns the call's end from elsewhere, or not at all, as with a real carrier.
  }
}
