// The media WebSocket of any carrier (docs/architecture.md section 4.2): its phase table and its
// frame loop. Frames are read through the carrier's codec; the stream is admitted (admit.ts) only
// with a valid single-use stream token, before any agent is dialed (each agent session costs
// money); then its call is made (call-factory.ts) and each caller frame goes straight to the
// call's session, whose audio and commands go back through the carrier leg (carrier-leg.ts).
import type WebSocket from 'ws';
import type { CarrierAdapter, LegEvent } from '../carrier-port.js';
import { AgentQueue } from '../session/agent-queue.js';
import type { CallSession } from '../session/session.js';
import { admitStream, type StreamStart } from './admit.js';
import { startCall } from './call-factory.js';
import { CarrierLeg, CLOSE } from './carrier-leg.js';
import type { MediaSocketDeps } from './deps.js';
import { trackLiveness } from './liveness.js';
import { declineStream } from './stream-decline.js';

export { CLOSE } from './carrier-leg.js';
export type { ForeignStream, MediaSocketDeps } from './deps.js';

const START_TIMEOUT_MS = 10_000;
/** Unreadable frames before `start` are tolerated only briefly: a stream that never starts costs a socket. */
const MAX_INVALID_BEFORE_START = 20;
/**
 * Any frames before `start`: a carrier sends a handful (`connected`); 10 s of 20 ms audio is 500.
 * Past this the peer is not a carrier starting a call.
 */
const MAX_FRAMES_BEFORE_START = 500;
/** Caller audio held from `start` until an agent is ready (while verified, dialed, configured). */
const MAX_EARLY_AUDIO_BYTES = 64 * 1024;
/** A caller's keys and the carrier's other events held while the stream is verified (a store round trip). */
const MAX_EARLY_EVENTS = 100;

/** How `ws` reports a peer breaking the WebSocket protocol, as refusal reasons. */
const PROTOCOL_ERRORS: Readonly<Record<string, string>> = Object.freeze({
  WS_ERR_UNSUPPORTED_MESSAGE_LENGTH: 'frame_too_large',
  WS_ERR_INVALID_UTF8: 'invalid_utf8',
});

/**
 * A media stream's phases and the moves each allows: `awaiting_start` (frames before the
 * carrier's `start`), `verifying` (the stream is admitted; caller audio waits in the agent's
 * queue), `live` (a call session carries it), `stopped` (refused, declined, ended or closed:
 * every frame is ignored).
 */
export const STREAM_TRANSITIONS = Object.freeze({
  awaiting_start: ['verifying', 'stopped'],
  verifying: ['live', 'stopped'],
  live: ['stopped'],
  stopped: [],
} as const satisfies Record<string, readonly string[]>);

export type StreamPhase = keyof typeof STREAM_TRANSITIONS;

/** Applies a move of the table; a stream already stopped stays so (every path may stop it). */
export function nextStreamPhase(from: StreamPhase, to: StreamPhase): StreamPhase {
  if (from === 'stopped' && to === 'stopped') return from;
  const allowed: readonly string[] = STREAM_TRANSITIONS[from];
  if (!allowed.includes(to)) throw new Error(`media stream cannot move from ${from} to ${to}`);
  return to;
}

export interface MediaSocketOptions {
  /** The stream token from the media URL's path, where the carrier carries it there. */
  pathToken?: string;
}

export function handleMediaSocket(
  socket: WebSocket,
  adapter: CarrierAdapter,
  deps: MediaSocketDeps,
  opts: MediaSocketOptions = {},
): void {
  const { metrics } = deps;
  const carrier = adapter.name;
  const codec = adapter.createCodec();
  trackLiveness(socket);
  let log = deps.logger.child({ carrier });
  const { dialPolicy } = deps;
  const leg = new CarrierLeg({ socket, codec, control: adapter.control, dialPolicy, metrics, logger: log });
  let phase: StreamPhase = 'awaiting_start';
  let session: CallSession | null = null;
  /** From `start` until the call exists: the caller's audio, in the queue its agent link will keep. */
  let held: AgentQueue | null = null;
  /** Meanwhile, what is not audio (a key, a hang-up): for the session once it exists. */
  let early: LegEvent[] = [];
  let framesBeforeStart = 0;
  let invalidBeforeStart = 0;

  const stop = (): void => {
    phase = nextStreamPhase(phase, 'stopped');
    held = null;
    early = [];
  };
  /** Refuses the stream, counted by reason; `ws` may already be closing it (`alreadyClosing`). */
  const reject = (reason: string, code: number = CLOSE.policyViolation, alreadyClosing = false) => {
    stop();
    metrics.streamsRejected.inc({ carrier, reason });
    log.warn({ reason }, 'media stream refused');
    if (!alreadyClosing) socket.close(code, reason);
  };
  const startTimer = setTimeout(() => phase === 'awaiting_start' && reject('no_start'), START_TIMEOUT_MS);
  startTimer.unref();

  const begin = async (start: StreamStart) => {
    phase = nextStreamPhase(phase, 'verifying');
    clearTimeout(startTimer);
    log = log.child({ callSid: start.callSid, streamSid: start.streamSid });
    leg.identify(start.callSid, log);
    const queue = new AgentQueue(MAX_EARLY_AUDIO_BYTES, metrics);
    held = queue;
    const waiting = () => phase === 'verifying';
    const ctx = { carrier, pathToken: opts.pathToken, logger: log, waiting };
    const admission = await admitStream(start, ctx, deps);
    if (admission.outcome === 'refused') return reject(admission.reason, admission.code);
    if (admission.outcome === 'gone') return;
    if (admission.outcome === 'declined') {
      stop();
      metrics.callsDeclined.inc({ carrier, reason: admission.reason });
      log.warn({ reason: admission.reason }, 'media stream declined');
      return declineStream(start, adapter, leg, deps);
    }
    const materials = { adapter, leg, heldAudio: queue, maxEarlyAudioBytes: MAX_EARLY_AUDIO_BYTES };
    session = startCall(start, admission.grant, admission.outbound, materials, deps);
    phase = nextStreamPhase(phase, 'live');
    held = null;
    const events = early;
    early = [];
    for (const event of events) onEvent(event);
  };

  // One event off the codec; on a live call, caller audio goes straight to its session.
  const onEvent = (event: LegEvent) => {
    if (phase === 'live') {
      switch (event.type) {
        case 'audio':
          return session!.onCallerAudio(event.payload);
        case 'dtmf':
          return session!.onCallerDtmf(event.digit);
        case 'mark':
          return session!.onMarkPlayed(event.name);
        case 'stop':
          stop();
          session!.end('caller_hangup');
          return socket.close(CLOSE.normal, 'stream stopped');
        case 'start':
          return metrics.carrierFramesInvalid.inc({ carrier, reason: 'duplicate_start' });
        default:
          // `cleared` confirms a clear already acted on; `ignored` carries nothing.
          return;
      }
    }
    if (phase === 'verifying') {
      // No call yet: audio waits in the queue its agent link will keep, anything else for its session.
      if (event.type === 'audio') held!.audio(event.payload);
      else if (event.type === 'start')
        metrics.carrierFramesInvalid.inc({ carrier, reason: 'duplicate_start' });
      else if (early.length < MAX_EARLY_EVENTS) early.push(event);
      else metrics.audioDropped.inc({ buffer: 'stream_verifying' });
      return;
    }
    if (phase !== 'awaiting_start') return;
    if (event.type === 'start') {
      begin(event).catch((err: Error) => {
        log.error({ err }, 'media stream failed to start');
        reject('internal_error', CLOSE.serverError);
      });
    } else if (event.type !== 'ignored') {
      metrics.carrierFramesInvalid.inc({ carrier, reason: `${event.type}_before_start` });
      if (event.type === 'stop') socket.close(CLOSE.normal, 'stream stopped');
    }
  };

  socket.on('message', (data: Buffer, isBinary: boolean) => {
    if (phase === 'stopped') return;
    if (phase === 'awaiting_start' && ++framesBeforeStart > MAX_FRAMES_BEFORE_START) {
      return reject('frames_before_start');
    }
    let parsed: LegEvent | readonly LegEvent[];
    try {
      parsed = codec.parse(data, isBinary);
    } catch (err) {
      metrics.carrierFramesInvalid.inc({ carrier, reason: isBinary ? 'binary' : 'unreadable' });
      log.debug({ err: (err as Error).message }, 'unreadable carrier frame');
      if (phase === 'awaiting_start' && ++invalidBeforeStart > MAX_INVALID_BEFORE_START) {
        reject('invalid_frames', isBinary ? CLOSE.unsupportedData : CLOSE.policyViolation);
      }
      return;
    }
    if (!Array.isArray(parsed)) return onEvent(parsed as LegEvent);
    // A codec that reorders frames may release several; one of them may end the stream.
    for (const event of parsed as readonly LegEvent[]) onEvent(event);
  });

  socket.on('error', (err: NodeJS.ErrnoException) => {
    log.debug({ err: err.message }, 'carrier socket error');
    // `ws` closes a socket that breaks the protocol itself (1009, 1007, …); before a call exists
    // that is a refused stream like any other.
    const code = typeof err.code === 'string' ? err.code : '';
    if ((phase === 'awaiting_start' || phase === 'verifying') && code.startsWith('WS_ERR_')) {
      reject(PROTOCOL_ERRORS[code] ?? 'protocol_error', CLOSE.policyViolation, true);
    }
  });
  socket.on('close', () => {
    clearTimeout(startTimer);
    stop();
    session?.end('caller_hangup');
  });
}
