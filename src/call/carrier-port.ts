// What the call core needs from a phone carrier, and what it offers a carrier's webhook routes.
// The core declares these; each carriers/<name> implements CarrierAdapter and app.ts plugs the
// adapters in, so nothing in src/call imports a carrier (docs/architecture.md).
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { MediaFormat } from '../audio/format.js';
import type { VerdictReport } from './outbound/amd-gate.js';
import type { OutboundContext } from './outbound/outbound-context.js';
import type { RequestAllowance } from './intake/trust.js';

/** A carrier's media frames, read into the same small set of events for every carrier. */
export type LegEvent =
  | {
      type: 'start';
      /** The carrier's id of the call (Twilio CallSid, Telnyx call_control_id, Plivo CallUUID, …). */
      callSid: string;
      /** The carrier's id of the media stream (the call id again where it has none). */
      streamSid: string;
      mediaFormat: MediaFormat;
      /** The stream token, where the carrier carries it in-band; otherwise the media URL's path holds it. */
      token?: string;
      /** Per-call values the carrier passed back (custom parameters, extra headers), for logs. */
      parameters: Record<string, string>;
    }
  /** Caller audio in the stream's media format. */
  | { type: 'audio'; payload: Buffer }
  | { type: 'dtmf'; digit: string }
  /** A mark (checkpoint, notify) sent earlier was reached: the audio before it played, or a clear flushed it. */
  | { type: 'mark'; name: string }
  /** The carrier confirmed a clear (Plivo `clearedAudio`, Vonage `websocket:cleared`). */
  | { type: 'cleared' }
  | { type: 'stop' }
  /** A well-formed frame that carries nothing for the call (Twilio `connected`, say). */
  | { type: 'ignored'; event: string };

/** A frame ready for `ws.send`: text for JSON protocols, binary for raw-audio ones. */
export type WireFrame = string | Buffer;

/** One media connection's codec: pure parse and serialize, no sockets. */
export interface LegCodec {
  /**
   * One frame off the socket. Returns one event, or several (a codec that reorders frames releases
   * the ones it held), or none. Throws CarrierFrameError on a frame it cannot read; never echoes
   * frame content in the message.
   */
  parse(data: Buffer, isBinary: boolean): LegEvent | readonly LegEvent[];
  /** Caller-bound audio in the stream's format, already cut to the carrier's DownlinkRules. */
  audio(payload: Buffer): WireFrame;
  clear(): WireFrame;
  mark(name: string): WireFrame;
}

/** How a carrier wants audio sent to it; the core's downlink applies them. */
export interface DownlinkRules {
  /** Audio goes out in whole multiples of this many bytes (20 ms of the format for most carriers). */
  frameBytes: number;
  /** Largest audio payload in one message; unset: no limit (Vonage: exactly one frame). */
  maxMessageBytes?: number;
  /** Smallest audio payload in one message; a shorter last chunk is padded with silence (Exotel). */
  minMessageBytes?: number;
  /** Release audio (and the marks after it) no more than this far ahead of real time (Vonage). */
  paceAheadMs?: number;
}

/** A carrier's call-control API (REST), where credentials allow it. */
export interface CarrierControl {
  hangup(callSid: string): Promise<void>;
  /** Moves the live call to `target` (E.164 or `sip:`); the media stream then ends. */
  transfer(callSid: string, target: string): Promise<void>;
}

export type Admission = 'admitted' | 'draining' | 'at_capacity' | 'store_unavailable';

/** A call announced by a carrier webhook, before its media stream arrives. */
export interface CallAnnouncement {
  carrier: string;
  callSid: string;
  from: string;
  to: string;
  direction: 'inbound' | 'outbound';
  /** The format the stream will bring: the pre-warmed agent is dialed for it. */
  mediaFormat: MediaFormat;
  /**
   * An outbound call's context, as `CallIntake.outboundContext` resolved it: its reference rides to
   * the call in the stream token, the context itself stays in the store.
   */
  context?: ResolvedContext;
  /** Whether the announcing request was verified: what it may cause is the core's to decide (trust.ts). */
  verified: boolean;
}

/** How an outbound call that ended without a conversation ended, in the carriers' common words. */
export type OutboundFinalStatus = 'completed' | 'busy' | 'no_answer' | 'failed' | 'canceled';

/** A carrier's status callback about an outbound call, read into the common words. */
export interface OutboundStatusReport {
  carrier: string;
  callSid: string;
  from: string;
  to: string;
  context: OutboundContext;
  status: OutboundFinalStatus;
  /** The carrier's own words for why (its SIP code, hang-up cause, error code), when it gives them. */
  reason: string | null;
  durationMs: number | null;
}

export interface PreparedCall {
  /** Single-use stream token, bound to the call. */
  token: string;
  /** Absolute ws(s) URL of the media stream: `/media/<carrier>/<instance>/<token>`. */
  mediaUrl: string;
  /** Bearer token of the call's observer feed (`GET /calls/:callSid/events`); null for an unverified request. */
  observerToken: string | null;
  /** The agent profile the called number routes to. */
  profile: string;
}

/**
 * The response header in which a carrier's answering route offers `PreparedCall.observerToken`, so a
 * simulated phone can follow its call's events (`GET /calls/:callSid/events`). Real carriers ignore it.
 */
export const OBSERVER_HEADER = 'x-callbridge-observer';

/** An outbound context a verified request named, with the reference it named it by. */
export interface ResolvedContext {
  ref: string;
  context: OutboundContext;
}

/** What the core offers a carrier's webhook routes. */
export interface CallIntake {
  /** Whether a new call may be taken now; declined calls never cost an agent session. */
  admit(carrier: string): Admission;
  /** What a request may cause, by whether it was verified (trust.ts): routes ask, never decide. */
  allowance(verified: boolean): RequestAllowance;
  /** Issues the stream token and routes the profile; for a verified request, pre-warms the agent. */
  prepare(call: CallAnnouncement): PreparedCall;
  /**
   * `prepare` for a webhook that announces a call: a verified announcement repeated (a replayed
   * signed request) gets the first answer again while its token is good, or is refused with a
   * ConflictError after that or on another instance; it never gets a second stream token,
   * observer token or pre-warmed agent (docs/security.md, "Replayed requests").
   */
  prepareOnce(call: CallAnnouncement): Promise<PreparedCall>;
  /**
   * What a declined caller hears, and where they may be sent instead. `audioUrl`, when set, is the
   * rendered decline as a WAV (prompt-routes.ts) for carriers that can play a recording; others
   * speak `message`.
   */
  readonly decline: { message: string; redirectUrl: string | null; audioUrl?: string | null };
  /** Counts a webhook or upgrade refused before any call existed (bad signature, malformed). */
  refused(carrier: string, reason: string): void;
  /**
   * The outbound context whose reference a carrier brought back (webhook URL, client state), read
   * from the store; null if this server did not issue the reference for that carrier, the context
   * expired or is gone, or the request was not verified (an unverified request reads no context).
   */
  outboundContext(carrier: string, ref: unknown, verified: boolean): Promise<ResolvedContext | null>;
  /**
   * An outbound call's own id, from a callback that carries its context, for a carrier whose answer
   * to the request to place the call named the request rather than the call (Plivo's request UUID):
   * the attempt follows the call by this id from then on. Called before the callback's other
   * reports (`outboundStatus`), so they find the attempt under it.
   */
  outboundCallIdentified(carrier: string, context: OutboundContext, callSid: string): void;
  /** An outbound call's final status from the carrier's callback. */
  outboundStatus(report: OutboundStatusReport): void;
  /** An answering-machine verdict for an outbound call, read into the common words. */
  machineVerdict(carrier: string, callSid: string, report: VerdictReport): void;
}

export interface CarrierAdapter {
  readonly name: string;
  /** Whether the carrier's requests are verified (its credentials are set). */
  readonly verified: boolean;
  createCodec(): LegCodec;
  downlink(format: MediaFormat): DownlinkRules;
  /** Checks the media upgrade request (a signature, Basic auth); throws a typed error to refuse it. */
  verifyUpgrade?(req: FastifyRequest): void;
  control: CarrierControl | null;
  /** The carrier's webhook routes (`/carriers/<name>/…`); the core registers `/media/<name>…`. */
  routes(intake: CallIntake): FastifyPluginAsync;
}
