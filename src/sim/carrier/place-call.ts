// A simulated inbound call, exactly as a carrier places it: the dialect announces the call the
// carrier's way (its webhook, signed when its credentials are given) and reads the answer; the
// phone then runs the media stream the answer names, in the carrier's framing; alongside, the
// server's observer feed when the answer offers one.
import type { SimDialect } from './dialect.js';
import { DEFAULT_DIALECT } from './dialects/index.js';
import { type CallEvent, createEventLog } from './events.js';
import type { GreetingWaitLimits } from './greeting-wait.js';
import { runMediaStream } from './media-stream.js';
import { type ObserverFeed, openObserverFeed } from './observer.js';

export interface PlaceCallOptions {
  /** Base URL of the server; default `http://127.0.0.1:8080`. */
  server?: string;
  /** The carrier to play; default Twilio. */
  dialect?: SimDialect;
  /** The environment: the dialect signs as its carrier does when its credentials are here. */
  env?: Record<string, string | undefined>;
  /** E.164; default `+15005550006`. */
  from?: string;
  /** E.164; default `+15005550001`. */
  to?: string;
  /** What the caller says: μ-law, 8 kHz, mono. */
  audio: Buffer;
  /** Paces caller audio at 20 ms per frame (default); false sends it at once. */
  realtime?: boolean;
  /**
   * Default true: the caller listens (sending silence frames) until the agent's greeting has played
   * and the line has been quiet for a moment, or until a cap passes, and only then speaks.
   */
  waitForGreeting?: boolean;
  /** Overrides of the greeting wait's quiet time and caps (greeting-wait.ts). */
  greetingWait?: Partial<GreetingWaitLimits>;
  /** How long the caller stays on the line after their audio ends; default 8000. */
  holdMs?: number;
  onEvent?(event: CallEvent): void;
  /** Aborting hangs up at once, as the caller putting the phone down. */
  signal?: AbortSignal;
  webhookTimeoutMs?: number;
  streamOpenTimeoutMs?: number;
  /**
   * The admin token, for the feed of a call whose answer offered no observer token: the server hands
   * one out only for a verified webhook (docs/security.md), and an unsigned one is not.
   */
  adminToken?: string | null;
}

export interface CallResult {
  /** The carrier's id of the call ('' when the call never got a stream). */
  callSid: string;
  streamSid: string;
  /** The agent audio the caller's speaker played (μ-law 8 kHz), without the silences between. */
  heard: Buffer;
  /** Both sides on the call's clock (μ-law 8 kHz, equal lengths): caller and agent as played. */
  sides: { caller: Buffer; agent: Buffer };
  events: CallEvent[];
  endReason: string;
  ok: boolean;
  /** From the start of the media stream to its end (0 when it never opened). */
  durationMs: number;
}

export const DEFAULT_SERVER = 'http://127.0.0.1:8080';
export const DEFAULT_FROM = '+15005550006';
export const DEFAULT_TO = '+15005550001';
/**
 * The number `call --record` dials when no `--to` is given: the shipped config/numbers.json routes
 * it to the `recorded` profile, whose calls are recorded (docs/recordings.md).
 */
export const RECORDED_TO = '+15550188';
export const DEFAULT_HOLD_MS = 8000;
/** How long the observer feed may take to report `end` once the media stream has closed. */
const OBSERVER_END_GRACE_MS = 1000;

export async function placeCall(opts: PlaceCallOptions): Promise<CallResult> {
  const server = (opts.server ?? DEFAULT_SERVER).replace(/\/+$/, '');
  const dialect = opts.dialect ?? DEFAULT_DIALECT;
  const log = createEventLog(opts.onEvent);
  const failed = (endReason: string, ids = { callSid: '', streamSid: '' }): CallResult => ({
    ...ids,
    heard: Buffer.alloc(0),
    sides: { caller: Buffer.alloc(0), agent: Buffer.alloc(0) },
    events: log.events,
    endReason,
    ok: false,
    durationMs: 0,
  });

  const answer = await dialect.announce({
    server,
    from: opts.from ?? DEFAULT_FROM,
    to: opts.to ?? DEFAULT_TO,
    env: opts.env ?? {},
    timeoutMs: opts.webhookTimeoutMs ?? 15_000,
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  if (answer.kind === 'failed') return failed(`webhook-failed: ${answer.error}`);
  if (answer.kind === 'declined') {
    log.emit({ type: 'declined', say: answer.say ?? '' });
    return failed(`declined: ${answer.reason}${answer.say ? ` (said "${answer.say}")` : ''}`);
  }
  for (const warning of answer.warnings) log.warnOnce(warning);
  const { stream } = answer;

  let observer: ObserverFeed | undefined;
  const feedToken = answer.observerToken ?? opts.adminToken ?? undefined;
  if (feedToken !== undefined) {
    observer = openObserverFeed({
      url: `${server}/calls/${encodeURIComponent(stream.callSid)}/events`,
      token: feedToken,
      onMessage: (message) => log.emit(message),
      onWarning: log.warnOnce,
    });
  }
  try {
    const outcome = await runMediaStream({
      stream,
      audio: opts.audio,
      realtime: opts.realtime ?? true,
      waitForGreeting: opts.waitForGreeting ?? true,
      ...(opts.greetingWait ? { greetingWait: opts.greetingWait } : {}),
      holdMs: opts.holdMs ?? DEFAULT_HOLD_MS,
      openTimeoutMs: opts.streamOpenTimeoutMs ?? 10_000,
      log,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    const durationMs = outcome.opened ? log.elapsedMs() : 0;
    // The server may report how the call ended just after closing the stream.
    if (outcome.opened) await observer?.waitForEnd(OBSERVER_END_GRACE_MS);
    return {
      callSid: stream.callSid,
      streamSid: stream.streamSid,
      heard: outcome.heard,
      sides: outcome.sides,
      events: log.events,
      endReason: outcome.endReason,
      ok: !outcome.failed && outcome.heard.length > 0,
      durationMs,
    };
  } finally {
    observer?.close();
  }
}
