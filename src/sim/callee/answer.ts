// The simulated callee: who answers an outbound call the simulated carrier API accepted, as the
// number plan says (plan.ts), and how the carrier tells the server about it (its line, lines/). The
// call rings; the carrier posts its progress callbacks; an answered call is announced with the same
// dialect code `callbridge call` uses (the answer URL, then the media stream it names), with the
// detection verdicts posted alongside; a call that is never answered ends busy, unanswered or
// failed. A call the server hangs up through the API ends its media stream at once.
import type { SimCallLog } from '../carrier-api/call-log.js';
import type { PlacedSimCall } from '../carrier-api/handler.js';
import { type CallEvent, createEventLog } from '../carrier/events.js';
import type { CalleeFinal, CalleeLine, CalleeLineFactory } from './line.js';
import { plivoLine } from './lines/plivo.js';
import { twilioLine } from './lines/twilio.js';
import { vonageLine } from './lines/vonage.js';
import { playExotelCallee } from './exotel.js';
import { type Callee, calleeFor } from './plan.js';
import { converse, endCall } from './conversation.js';
import { calleeSounds } from './sounds.js';
import { playTelnyxCallee } from './telnyx.js';
import { CALLBACK_TIMEOUT_MS, hungUpWithin, serverHangup } from './timing.js';

export interface SimCalleeOptions {
  /**
   * Multiplies the plan's waits (ringing, a person's time on the line, detection) but not the
   * audio itself: 1 is real time; tests and benchmarks go faster.
   */
  timeScale?: number;
  /**
   * The server's webhook secrets, by their environment names (`TWILIO_AUTH_TOKEN`,
   * `PLIVO_AUTH_TOKEN`, `VONAGE_SIGNATURE_SECRET`, …): the carrier signs its callbacks with them
   * as the server verifies them. Default: none, callbacks unsigned.
   */
  env?: Record<string, string | undefined>;
  /** Each call's end, for tests: who answered and what the callee heard. */
  onCallEnded?(result: SimCalleeResult): void;
  onError?(message: string): void;
}

export interface SimCalleeResult {
  callSid: string;
  to: string;
  callee: Callee;
  /** The final status posted: `completed`, `busy`, `no-answer`, `failed`, `canceled`. */
  status: string;
  /** Agent audio the callee's phone played (μ-law 8 kHz). */
  heard: Buffer;
  /** The last verdict the detection posted, if any. */
  verdict: string | null;
}

/** The carriers whose placed calls the simulated callee answers. */
const LINES: Readonly<Record<string, CalleeLineFactory>> = Object.freeze({
  twilio: twilioLine,
  plivo: plivoLine,
  vonage: vonageLine,
});

type PlayCallee = (
  call: PlacedSimCall,
  callee: Callee,
  calls: SimCallLog,
  opts: SimCalleeOptions,
) => Promise<void>;

/**
 * Carriers whose calls do not start at an answer URL play their callee themselves: Telnyx announces
 * the call by webhooks and streams once the server asks; Exotel's flow asks the server for a socket.
 */
const OWN_PLAYERS: Readonly<Record<string, PlayCallee>> = Object.freeze({
  telnyx: playTelnyxCallee,
  exotel: playExotelCallee,
});

/** Answers what the simulated carrier API places: pass as its `onPlaced`. */
export function simulatedCallee(opts: SimCalleeOptions = {}) {
  const attempts = new Map<string, number>();
  return (call: PlacedSimCall, calls: SimCallLog): void => {
    const line = Object.hasOwn(LINES, call.carrier) ? LINES[call.carrier] : undefined;
    const own = Object.hasOwn(OWN_PLAYERS, call.carrier) ? OWN_PLAYERS[call.carrier] : undefined;
    if (line === undefined && own === undefined) return;
    const attempt = (attempts.get(call.to) ?? 0) + 1;
    attempts.set(call.to, attempt);
    if (attempts.size > 100_000) attempts.clear();
    const callee = calleeFor(call.to, attempt);
    const context = { call, env: opts.env ?? {}, timeoutMs: CALLBACK_TIMEOUT_MS };
    const played = line
      ? playCallee(call, line(context), callee, calls, opts)
      : own?.(call, callee, calls, opts);
    void played?.catch((err: Error) => opts.onError?.(`simulated callee of ${call.callSid}: ${err.message}`));
  };
}

async function playCallee(
  call: PlacedSimCall,
  line: CalleeLine,
  callee: Callee,
  calls: SimCallLog,
  opts: SimCalleeOptions,
): Promise<void> {
  const scale = opts.timeScale ?? 1;
  const progress = (word: 'ringing' | 'in-progress') => {
    calls.update(call.callSid, (record) => {
      record.status = word;
    });
    return line.progress(word);
  };
  const ended = async (
    word: CalleeFinal,
    durationS: number,
    heard: Buffer = Buffer.alloc(0),
    verdict: string | null = null,
  ) => {
    endCall(calls, call, callee, opts, { status: word, durationS, heard, verdict });
    await line.final(word, durationS);
  };

  await line.progress('initiated');
  await progress('ringing');
  if (await hungUpWithin(calls, call.callSid, callee.ringMs * scale)) {
    await ended('canceled', 0);
    return;
  }
  if (callee.kind === 'busy' || callee.kind === 'no_answer' || callee.kind === 'unreachable') {
    await ended(callee.kind === 'busy' ? 'busy' : callee.kind === 'no_answer' ? 'no-answer' : 'failed', 0);
    return;
  }

  calls.update(call.callSid, (record) => {
    record.state = 'answered';
  });
  await progress('in-progress');
  const answeredAt = Date.now();
  const sounds = calleeSounds();
  const hungUp = serverHangup(calls, call.callSid);

  const answer = await line.dialect.announce({
    server: new URL(call.answerUrl).origin,
    from: call.from,
    to: call.to,
    env: opts.env ?? {},
    timeoutMs: CALLBACK_TIMEOUT_MS,
    signal: hungUp,
    outbound: {
      answerUrl: call.answerUrl,
      callSid: call.callSid,
      ...(call.requestId === undefined ? {} : { requestId: call.requestId }),
      accountSid: call.accountSid,
    },
  });
  if (answer.kind !== 'stream') {
    // The carrier plays an application error and hangs up: the call was answered, then completed.
    opts.onError?.(
      `answer URL of ${call.callSid}: ${answer.kind === 'failed' ? answer.error : answer.reason}`,
    );
    await ended('completed', 1);
    return;
  }

  // Detection listens from the moment the media flows, as the callee's audio does.
  let verdict: string | null = null;
  const planned = line.verdicts(callee, sounds, scale);
  const detection: NodeJS.Timeout[] = [];
  const onEvent = (event: CallEvent) => {
    if (event.type !== 'stream-started' || detection.length > 0) return;
    for (const step of planned) {
      detection.push(
        setTimeout(() => {
          verdict = step.word;
          void step.post();
        }, step.afterMs),
      );
    }
  };

  const outcome = await converse({
    stream: answer.stream,
    callee,
    sounds,
    scale,
    log: createEventLog(onEvent),
    signal: hungUp,
  });
  for (const timer of detection) clearTimeout(timer);
  const durationS = Math.max(1, Math.round((Date.now() - answeredAt) / 1000));
  await ended('completed', durationS, outcome.heard, verdict);
}
