// A simulated inbound Twilio call, exactly as the carrier places it (PROTOCOLS.md section 2): the
// signed voice webhook, the TwiML answer, then the bidirectional media stream it names; alongside,
// the server's observer feed when the webhook offers one.
import { randomBytes } from 'node:crypto';
import { type CallEvent, createEventLog } from './events.js';
import type { GreetingWaitLimits } from './greeting-wait.js';
import { runMediaStream } from './media-stream.js';
import { type ObserverFeed, openObserverFeed } from './observer.js';
import { postVoiceWebhook } from './voice-webhook.js';

export interface PlaceCallOptions {
  /** Base URL of the server; default `http://127.0.0.1:8080`. */
  server?: string;
  /** E.164; default `+15005550006`. */
  from?: string;
  /** E.164; default `+15005550001`. */
  to?: string;
  /** What the caller says: μ-law, 8 kHz, mono. */
  audio: Buffer;
  /** Signs the webhook and the media upgrade as Twilio does when given. */
  authToken?: string;
  /** Default: a fresh `AC…` sid. */
  accountSid?: string;
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
}

export interface CallResult {
  callSid: string;
  streamSid: string;
  /** The agent audio the caller's speaker played (μ-law 8 kHz), without the silences between. */
  heard: Buffer;
  events: CallEvent[];
  endReason: string;
  ok: boolean;
  /** From the start of the media stream to its end (0 when it never opened). */
  durationMs: number;
}

export const DEFAULT_SERVER = 'http://127.0.0.1:8080';
export const DEFAULT_FROM = '+15005550006';
export const DEFAULT_TO = '+15005550001';
export const DEFAULT_HOLD_MS = 8000;
/** How long the observer feed may take to report `end` once the media stream has closed. */
const OBSERVER_END_GRACE_MS = 1000;

/** Twilio sids: a two-letter type prefix and 32 hex digits. */
export function twilioSid(prefix: 'CA' | 'AC' | 'MZ'): string {
  return prefix + randomBytes(16).toString('hex');
}

export async function placeCall(opts: PlaceCallOptions): Promise<CallResult> {
  const server = (opts.server ?? DEFAULT_SERVER).replace(/\/+$/, '');
  const callSid = twilioSid('CA');
  const accountSid = opts.accountSid ?? twilioSid('AC');
  const streamSid = twilioSid('MZ');
  const log = createEventLog(opts.onEvent);
  const failed = (endReason: string): CallResult => ({
    callSid,
    streamSid,
    heard: Buffer.alloc(0),
    events: log.events,
    endReason,
    ok: false,
    durationMs: 0,
  });

  const webhook = await postVoiceWebhook({
    url: `${server}/carriers/twilio/voice`,
    callSid,
    accountSid,
    from: opts.from ?? DEFAULT_FROM,
    to: opts.to ?? DEFAULT_TO,
    authToken: opts.authToken,
    timeoutMs: opts.webhookTimeoutMs ?? 15_000,
    signal: opts.signal,
  });
  if (!webhook.ok) return failed(`webhook-failed: ${webhook.error}`);
  for (const warning of webhook.warnings) log.warnOnce(warning);
  const answer = webhook.answer;
  if (answer.kind === 'declined') {
    log.emit({ type: 'declined', say: answer.say });
    return failed(`declined: ${answer.reason}${answer.say ? ` (said "${answer.say}")` : ''}`);
  }
  const streamUrl = checkStreamUrl(answer.url, log.warnOnce);
  if (streamUrl instanceof Error) return failed(`stream-failed: ${streamUrl.message}`);

  let observer: ObserverFeed | undefined;
  if (webhook.observerToken !== undefined) {
    observer = openObserverFeed({
      url: `${server}/calls/${callSid}/events`,
      token: webhook.observerToken,
      onMessage: (message) => log.emit(message),
      onWarning: log.warnOnce,
    });
  }
  try {
    const stream = await runMediaStream({
      url: streamUrl,
      authToken: opts.authToken,
      callSid,
      accountSid,
      streamSid,
      customParameters: answer.parameters,
      audio: opts.audio,
      realtime: opts.realtime ?? true,
      waitForGreeting: opts.waitForGreeting ?? true,
      greetingWait: opts.greetingWait,
      holdMs: opts.holdMs ?? DEFAULT_HOLD_MS,
      openTimeoutMs: opts.streamOpenTimeoutMs ?? 10_000,
      log,
      signal: opts.signal,
    });
    const durationMs = stream.opened ? log.elapsedMs() : 0;
    // The server may report how the call ended just after closing the stream.
    if (stream.opened) await observer?.waitForEnd(OBSERVER_END_GRACE_MS);
    return {
      callSid,
      streamSid,
      heard: stream.heard,
      events: log.events,
      endReason: stream.endReason,
      ok: !stream.failed && stream.heard.length > 0,
      durationMs,
    };
  } finally {
    observer?.close();
  }
}

/** Twilio connects only to WebSocket URLs and does not pass a query string on (use <Parameter>). */
function checkStreamUrl(raw: string, warn: (message: string) => void): string | Error {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return new Error(`<Stream url="${raw}"> is not an absolute URL`);
  }
  if (url.protocol !== 'wss:' && url.protocol !== 'ws:') {
    return new Error(`<Stream url="${raw}"> must be a wss:// (or ws://) URL`);
  }
  if (url.search !== '') {
    warn('<Stream url> carries a query string, which Twilio drops; pass per-call data as <Parameter>');
    return raw.slice(0, raw.indexOf('?'));
  }
  return raw;
}
