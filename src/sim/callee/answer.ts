// The simulated callee: who answers an outbound call the simulated carrier API accepted, as the
// number plan says (plan.ts), and how the carrier tells the server about it. The call rings; the
// carrier posts its status callbacks; an answered call is announced with the same dialect code
// `callbridge call` uses (the answer URL, then the media stream it names), with the detection
// verdict posted alongside; a call that is never answered ends busy, unanswered or failed. A call
// the server hangs up through the API ends its media stream at once.
import type { SimCallLog } from '../carrier-api/call-log.js';
import type { PlacedSimCall } from '../carrier-api/handler.js';
import { type CallEvent, createEventLog } from '../carrier/events.js';
import { runMediaStream } from '../carrier/media-stream.js';
import { twilioDialect } from '../carrier/dialects/twilio.js';
import { playExotelCallee } from './exotel.js';
import { type Callee, calleeFor } from './plan.js';
import { calleeSounds } from './sounds.js';

export interface SimCalleeOptions {
  /**
   * Multiplies the plan's waits (ringing, a person's time on the line, detection) but not the
   * audio itself: 1 is real time; tests and benchmarks go faster.
   */
  timeScale?: number;
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
  /** The verdict the detection posted, if any. */
  verdict: string | null;
}

const CALLBACK_TIMEOUT_MS = 10_000;
/** How long after the answer detection takes to hear a person (docs/protocols/answering-machine-detection.md: 2-4 s). */
const HUMAN_VERDICT_MS = 2_500;
const UNSURE_VERDICT_MS = 6_000;
const FAX_VERDICT_MS = 2_000;
/** Detection calls the greeting ended a moment after the beep stops. */
const BEEP_SETTLE_MS = 300;
/** A voicemail records until the server hangs up, up to this long. */
const VOICEMAIL_RECORD_MS = 90_000;
/** How long a person stays on the line after speaking, at time scale 1. */
const PERSON_HOLD_MS = 8_000;
const SIP: Readonly<Record<string, string>> = Object.freeze({
  busy: '486',
  'no-answer': '480',
  failed: '404',
});

type PlayCallee = (
  call: PlacedSimCall,
  callee: Callee,
  calls: SimCallLog,
  opts: SimCalleeOptions,
) => Promise<void>;

/** How each carrier the simulated API places calls for plays its callee. */
const CALLEES_BY_CARRIER: Readonly<Record<string, PlayCallee>> = Object.freeze({
  twilio: (call, callee, calls, opts) => playTwilioCallee(call, callee, calls, opts),
  exotel: (call, callee, calls, opts) => playExotelCallee(call, callee, calls, opts),
});

/** Answers what the simulated carrier API places: pass as its `onPlaced`. */
export function simulatedCallee(opts: SimCalleeOptions = {}) {
  const attempts = new Map<string, number>();
  return (call: PlacedSimCall, calls: SimCallLog): void => {
    const play = CALLEES_BY_CARRIER[call.carrier];
    if (play === undefined) return;
    const attempt = (attempts.get(call.to) ?? 0) + 1;
    attempts.set(call.to, attempt);
    if (attempts.size > 100_000) attempts.clear();
    void play(call, calleeFor(call.to, attempt), calls, opts).catch((err: Error) =>
      opts.onError?.(`simulated callee of ${call.callSid}: ${err.message}`),
    );
  };
}

async function post(url: string | null, params: Record<string, string>): Promise<void> {
  if (url === null) return;
  try {
    await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'TwilioProxy/1.1' },
      body: new URLSearchParams(params).toString(),
      signal: AbortSignal.timeout(CALLBACK_TIMEOUT_MS),
    });
  } catch {
    // A carrier does not retry a status callback the server missed; neither does the simulation.
  }
}

/** Resolves true once the server has hung the call up through the API, false after `ms`. */
async function hungUpWithin(calls: SimCallLog, callSid: string, ms: number): Promise<boolean> {
  const call = await calls.waitFor(callSid, (c) => c.state === 'ended', Math.max(0, ms));
  return call?.state === 'ended';
}

async function playTwilioCallee(
  call: PlacedSimCall,
  callee: Callee,
  calls: SimCallLog,
  opts: SimCalleeOptions,
): Promise<void> {
  const scale = opts.timeScale ?? 1;
  const base = {
    CallSid: call.callSid,
    AccountSid: call.accountSid,
    From: call.from,
    To: call.to,
    Direction: 'outbound-api',
    ApiVersion: '2010-04-01',
  };
  const status = (word: string, extra: Record<string, string> = {}) => {
    calls.update(call.callSid, (record) => {
      record.status = word;
    });
    return post(call.statusUrl, { ...base, CallStatus: word, ...extra });
  };
  const ended = (
    word: string,
    durationS: number,
    heard: Buffer = Buffer.alloc(0),
    verdict: string | null = null,
  ) => {
    calls.update(call.callSid, (record) => {
      record.state = 'ended';
      record.status = word;
      record.durationS = durationS;
    });
    opts.onCallEnded?.({ callSid: call.callSid, to: call.to, callee, status: word, heard, verdict });
  };

  await status('initiated');
  await status('ringing');
  if (await hungUpWithin(calls, call.callSid, callee.ringMs * scale)) {
    await post(call.statusUrl, { ...base, CallStatus: 'canceled', CallDuration: '0' });
    ended('canceled', 0);
    return;
  }
  if (callee.kind === 'busy' || callee.kind === 'no_answer' || callee.kind === 'unreachable') {
    const word = callee.kind === 'busy' ? 'busy' : callee.kind === 'no_answer' ? 'no-answer' : 'failed';
    ended(word, 0);
    await post(call.statusUrl, { ...base, CallStatus: word, CallDuration: '0', SipResponseCode: SIP[word]! });
    return;
  }

  calls.update(call.callSid, (record) => {
    record.state = 'answered';
  });
  await status('in-progress');
  const answeredAt = Date.now();
  const sounds = calleeSounds();
  const hangup = new AbortController();
  void calls
    .waitFor(call.callSid, (c) => c.state === 'ended', VOICEMAIL_RECORD_MS * 2)
    .then((c) => c?.state === 'ended' && hangup.abort());

  const answer = await twilioDialect.announce({
    server: new URL(call.answerUrl).origin,
    from: call.from,
    to: call.to,
    env: {},
    timeoutMs: CALLBACK_TIMEOUT_MS,
    signal: hangup.signal,
    outbound: { answerUrl: call.answerUrl, callSid: call.callSid, accountSid: call.accountSid },
  });
  if (answer.kind !== 'stream') {
    // Twilio plays an application error and hangs up: the call was answered, then completed.
    opts.onError?.(
      `answer URL of ${call.callSid}: ${answer.kind === 'failed' ? answer.error : answer.reason}`,
    );
    ended('completed', 1);
    await status('completed', { CallDuration: '1' });
    return;
  }

  // Detection listens from the answer; its verdict comes as the callee would give it away.
  let verdict: string | null = null;
  const verdictAt: Record<Callee['kind'], [string, number] | null> = {
    person: ['human', HUMAN_VERDICT_MS * scale],
    silent: ['unknown', UNSURE_VERDICT_MS * scale],
    voicemail: ['machine_end_beep', sounds.beepEndsAtMs + BEEP_SETTLE_MS],
    fax: ['fax', FAX_VERDICT_MS * scale],
    busy: null,
    no_answer: null,
    unreachable: null,
  };
  const planned = call.amdUrl === null ? null : verdictAt[callee.kind];
  let detection: NodeJS.Timeout | null = null;
  // Detection listens from the moment the media flows, as the callee's audio does.
  const onEvent = (event: CallEvent) => {
    if (event.type !== 'stream-started' || planned === null || detection !== null) return;
    detection = setTimeout(() => {
      verdict = planned[0];
      void post(call.amdUrl, {
        ...base,
        AnsweredBy: planned[0],
        MachineDetectionDuration: String(Math.round(planned[1])),
      });
    }, planned[1]);
  };

  const audio =
    callee.kind === 'person'
      ? sounds.person
      : callee.kind === 'voicemail'
        ? sounds.voicemail
        : callee.kind === 'fax'
          ? sounds.fax
          : Buffer.alloc(0);
  const outcome = await runMediaStream({
    stream: answer.stream,
    audio,
    realtime: true,
    // A person listens to the greeting first; a machine plays its own greeting at once.
    waitForGreeting: callee.kind === 'person',
    holdMs:
      callee.kind === 'person'
        ? PERSON_HOLD_MS * scale
        : callee.kind === 'voicemail'
          ? VOICEMAIL_RECORD_MS
          : callee.answeredMs * scale,
    openTimeoutMs: CALLBACK_TIMEOUT_MS,
    log: createEventLog(onEvent),
    signal: hangup.signal,
  });
  if (detection) clearTimeout(detection);
  const durationS = Math.max(1, Math.round((Date.now() - answeredAt) / 1000));
  ended('completed', durationS, outcome.heard, verdict);
  await status('completed', { CallDuration: String(durationS) });
}
