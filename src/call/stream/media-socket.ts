// The media WebSocket of any carrier (docs/architecture.md, "Call intake"): frames are read through
// the carrier's codec; the stream is admitted only with a valid single-use stream token, before
// any agent is dialed (each agent session costs money); then the call's events go to its
// CallSession, and the session's audio and commands go back through the same codec.
import type { Logger } from 'pino';
import WebSocket from 'ws';
import type { AgentDialer } from '../../agent/dialer.js';
import type { AgentSession } from '../../agent/session.js';
import { sameFormat, unsupportedFormatReason } from '../../audio/format.js';
import type { Config } from '../../config/types.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { Store } from '../../store/store.js';
import type { Admission, CarrierAdapter, LegEvent } from '../carrier-port.js';
import type { CallEventHub } from '../watch/events.js';
import { fallbackAudio, type PromptPlayer } from '../session/fallback-audio.js';
import type { VoicemailRecordingSource } from '../outbound/voicemail-recordings.js';
import type { RecordCall } from '../recording-port.js';
import type { CallLeg } from '../leg.js';
import { trackLiveness } from './liveness.js';
import type { PendingStreams } from '../intake/pending-streams.js';
import { type PrewarmedAgent, type PrewarmPool, prewarmKey } from '../intake/prewarm.js';
import type { CallRecord } from '../../store/call-record.js';
import type { MachineVerdicts } from '../outbound/machine-verdicts.js';
import { type OutboundContext, outboundContexts } from '../outbound/outbound-context.js';
import type { CallRegistry } from '../watch/registry.js';
import { profileWithVariables } from '../../agent/placeholders.js';
import { type CallInfo, CallSession } from '../session/session.js';
import { playDecline } from './stream-decline.js';
import { checkStreamToken, type StreamGrant } from '../intake/stream-token.js';
import { DialPolicy } from '../../trust/dial-policy.js';

/** A stream's call, as the instance that answered its webhook names it. */
export interface ForeignStream {
  /** The instance that prepared the call and may hold its pre-warmed agent. */
  instance: string;
  carrier: string;
  callSid: string;
}

export interface MediaSocketDeps {
  config: Config;
  store: Store;
  dial: AgentDialer;
  metrics: Metrics;
  logger: Logger;
  registry: CallRegistry;
  events: CallEventHub;
  prewarm: PrewarmPool<PrewarmedAgent>;
  /** Answering-machine verdicts that came before their call's stream. */
  verdicts?: MachineVerdicts;
  saveRecord(record: CallRecord): void;
  /** Whether a call not prepared here may be taken now (not draining, under the admitted concurrency). */
  admitCall(): Admission;
  /**
   * A stream arrived here for a call another instance prepared: this instance carries it with a
   * fresh dial, so the other's pre-warmed agent will never be claimed. The fleet tells that instance
   * to close it at once; without one it expires there after its TTL.
   */
  releaseRemotePrewarm(stream: ForeignStream): void;
  /** Calls prepared here awaiting their stream (a drain waits for them). */
  pending?: PendingStreams;
  /** The fixed prompts (rendered, else bundled) a caller hears without an agent. */
  prompts?: PromptPlayer;
  /** The pre-recorded voicemails of outbound calls (`amd.voicemail.audioUrl`). */
  voicemailRecordings?: VoicemailRecordingSource;
  /** Every transfer (operator, agent function, fallback) goes to a number it allows; default: the defaults. */
  dialPolicy?: DialPolicy;
  /** Starts the recording of a call whose profile (or call, or campaign) asks for one. */
  recordCall?: RecordCall;
}

/** WebSocket close codes used on media streams (RFC 6455 section 7.4.1). */
export const CLOSE = Object.freeze({
  normal: 1000,
  unsupportedData: 1003,
  policyViolation: 1008,
  tooBig: 1009,
  serverError: 1011,
  tryAgainLater: 1013,
});

const START_TIMEOUT_MS = 10_000;
/** Unreadable frames before `start` are tolerated only briefly: a stream that never starts costs a socket. */
const MAX_INVALID_BEFORE_START = 20;
/**
 * Any frames before `start`: a carrier sends a handful (`connected`); 10 s of 20 ms audio is 500.
 * Past this the peer is not a carrier starting a call.
 */
const MAX_FRAMES_BEFORE_START = 500;
/** Caller audio held while the token is checked (a store round trip). */
const MAX_VERIFYING_FRAMES = 100;
/** Past this many bytes queued toward the carrier, the phone side is not reading: drop, count. */
const MAX_CARRIER_BACKLOG_BYTES = 1024 * 1024;
/** Caller audio held while the agent is dialed and configured. */
const MAX_EARLY_AUDIO_BYTES = 64 * 1024;

/** How `ws` reports a peer breaking the WebSocket protocol, as refusal reasons. */
const PROTOCOL_ERRORS: Readonly<Record<string, string>> = Object.freeze({
  WS_ERR_UNSUPPORTED_MESSAGE_LENGTH: 'frame_too_large',
  WS_ERR_INVALID_UTF8: 'invalid_utf8',
});

/**
 * A media stream's phases and the moves each allows: `awaiting_start` (frames before the
 * carrier's `start`), `verifying` (the stream token is checked, caller audio held), `live` (a call
 * session carries it), `stopped` (refused, declined, ended or closed: every frame is ignored).
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
type StartEvent = Extract<LegEvent, { type: 'start' }>;

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
  const { metrics, config } = deps;
  const carrier = adapter.name;
  const codec = adapter.createCodec();
  trackLiveness(socket);
  let log = deps.logger.child({ carrier });
  let phase: StreamPhase = 'awaiting_start';
  const move = (to: StreamPhase) => {
    phase = nextStreamPhase(phase, to);
  };
  let session: CallSession | null = null;
  let framesBeforeStart = 0;
  let invalidBeforeStart = 0;
  let verifying: LegEvent[] = [];

  const send = (frame: string | Buffer) => {
    if (socket.readyState !== WebSocket.OPEN) return;
    if (socket.bufferedAmount > MAX_CARRIER_BACKLOG_BYTES) {
      metrics.audioDropped.inc({ buffer: 'carrier_socket' });
      return;
    }
    socket.send(frame);
  };
  const closeStream = () => socket.close(CLOSE.normal, 'call ended');
  const { control } = adapter;
  let callSid = '';
  const leg: CallLeg = {
    sendAudio: (payload) => send(codec.audio(payload)),
    clear: () => send(codec.clear()),
    mark: (name) => send(codec.mark(name)),
    hangup: () => {
      if (!control) {
        // With no call-control API, closing the media stream is how the call ends.
        closeStream();
        return;
      }
      control
        .hangup(callSid)
        .catch((err: Error) => log.warn({ err: err.message }, 'carrier hang-up request failed'))
        .finally(closeStream);
    },
    closeStream,
    canTransfer: control !== null,
    transfer: async (target) => {
      if (!control) throw new Error('this carrier has no call-control API configured');
      (deps.dialPolicy ?? new DialPolicy()).assert(target, 'transfer');
      await control.transfer(callSid, target);
    },
  };

  /** Refuses the stream, counted by reason; `ws` may already be closing it (`alreadyClosing`). */
  const reject = (reason: string, code: number = CLOSE.policyViolation, alreadyClosing = false) => {
    move('stopped');
    verifying = [];
    metrics.streamsRejected.inc({ carrier, reason });
    log.warn({ reason }, 'media stream refused');
    if (!alreadyClosing) socket.close(code, reason);
  };

  /**
   * Declines a stream this instance cannot carry now: the caller hears the decline message, then
   * the line is hung up. No agent is dialed.
   */
  const decline = (start: StartEvent, reason: string) => {
    move('stopped');
    verifying = [];
    metrics.callsDeclined.inc({ carrier, reason });
    log.warn({ reason }, 'media stream declined');
    // An agent pre-warmed here for this call will never be used.
    deps.pending?.settled(prewarmKey(carrier, start.callSid));
    deps.prewarm.take(prewarmKey(carrier, start.callSid))?.close();
    const format = start.mediaFormat;
    const audio = deps.prompts
      ? deps.prompts('at_capacity', format).catch(() => fallbackAudio(undefined, format))
      : Promise.resolve(fallbackAudio(undefined, format));
    void audio
      .then((message) =>
        playDecline({
          audio: message,
          rules: adapter.downlink(format),
          format,
          send: (payload) => {
            if (socket.readyState !== WebSocket.OPEN) return false;
            send(codec.audio(payload));
            return true;
          },
        }),
      )
      .finally(() => leg.hangup());
  };

  const startTimer = setTimeout(() => {
    if (phase === 'awaiting_start') reject('no_start');
  }, START_TIMEOUT_MS);
  startTimer.unref();

  const dispatch = (event: LegEvent) => {
    if (!session) return;
    switch (event.type) {
      case 'audio':
        session.onCallerAudio(event.payload);
        break;
      case 'dtmf':
        session.onCallerDtmf(event.digit);
        break;
      case 'mark':
        session.onMarkPlayed(event.name);
        break;
      case 'stop':
        move('stopped');
        session.end('caller_hangup');
        socket.close(CLOSE.normal, 'stream stopped');
        break;
      default:
        // `cleared` confirms a clear already acted on; `ignored` carries nothing.
        break;
    }
  };

  /** The pre-warmed session for this call, if one was dialed here for the format the stream brings. */
  const claimPrewarmed = (start: StartEvent): Promise<AgentSession | null> | undefined => {
    const prewarmed = deps.prewarm.take(prewarmKey(carrier, start.callSid));
    if (!prewarmed) return undefined;
    if (!sameFormat(prewarmed.format, start.mediaFormat)) {
      metrics.prewarm.inc({ outcome: 'format_mismatch' });
      prewarmed.close();
      return undefined;
    }
    metrics.prewarm.inc({ outcome: 'used' });
    metrics.streamPrewarm.inc({ carrier, outcome: 'used' });
    return prewarmed.ready;
  };

  const startSession = (start: StartEvent, grant: StreamGrant, outbound: OutboundContext | null) => {
    const profileName = config.profiles[grant.profile] ? grant.profile : config.numbers.default;
    const named = config.profiles[profileName]!;
    // An outbound call's prompt and greeting speak the contact's variables.
    const spoken = outbound ? profileWithVariables(named, outbound.variables) : named;
    // Recording asked for by the call or its campaign wins over the profile's (docs/recordings.md).
    const profile = outbound?.recording ? { ...spoken, recording: outbound.recording } : spoken;
    const info: CallInfo = {
      callSid: start.callSid,
      streamSid: start.streamSid,
      carrier,
      direction: grant.direction,
      from: grant.from,
      to: grant.to,
      profileName,
      profile,
      mediaFormat: start.mediaFormat,
      ...(outbound ? { outbound } : {}),
      ...(outbound?.campaignId ? { campaign: outbound.campaignId } : {}),
    };
    const downlink = adapter.downlink(start.mediaFormat);
    const recorded = deps.recordCall?.(info) ?? null;
    const callDeps = {
      dial: deps.dial,
      metrics,
      logger: deps.logger.child({ carrier }),
      events: deps.events,
      frameBytes: downlink.frameBytes,
      downlink,
      maxEarlyAudioBytes: MAX_EARLY_AUDIO_BYTES,
      // The profile's own recording wins; without one the "unavailable" prompt plays.
      fallbackAudio: profile.fallback.audioFile
        ? fallbackAudio(profile.fallback.audioFile, start.mediaFormat)
        : null,
      ...(deps.prompts ? { prompts: deps.prompts } : {}),
      ...(deps.voicemailRecordings ? { voicemailRecordings: deps.voicemailRecordings } : {}),
      ...(recorded ? { audioListeners: [recorded.listener], recording: recorded.port } : {}),
      onEnded: (ended: CallSession, record: CallRecord) => {
        deps.registry.remove(ended);
        deps.saveRecord({ ...record, instance: config.instanceId, region: config.region });
      },
    };
    session = new CallSession(info, leg, callDeps);
    deps.registry.add(session);
    move('live');
    const held = verifying;
    verifying = [];
    const prepared = grant.instance === config.instanceId;
    const prewarmed = prepared ? claimPrewarmed(start) : undefined;
    if (prepared && prewarmed === undefined) metrics.streamPrewarm.inc({ carrier, outcome: 'none' });
    void session.start(prewarmed);
    const verdict = deps.verdicts?.take(carrier, start.callSid);
    if (verdict) session.onMachineVerdict(verdict);
    for (const event of held) dispatch(event);
  };

  const admit = async (start: StartEvent) => {
    move('verifying');
    clearTimeout(startTimer);
    log = log.child({ callSid: start.callSid, streamSid: start.streamSid });
    const check = checkStreamToken(config.streamTokenSecret, start.token ?? opts.pathToken, {
      carrier,
      callSid: start.callSid,
    });
    if (!check.ok) {
      reject(`token_${check.reason}`);
      return;
    }
    const { grant } = check;
    const unsupported = unsupportedFormatReason(start.mediaFormat);
    if (unsupported !== null) {
      log.warn({ problem: unsupported }, 'media format cannot be carried');
      reject('unsupported_format', CLOSE.unsupportedData);
      return;
    }
    callSid = start.callSid;
    let first: boolean;
    try {
      first = await deps.store.claimOnce(`stream-token:${grant.nonce}`, config.streamTokenTtlMs);
    } catch (err) {
      log.error({ err: (err as Error).message }, 'store unavailable while admitting a stream');
      decline(start, 'store_unavailable');
      return;
    }
    if (!first) {
      reject('token_replayed');
      return;
    }
    deps.pending?.settled(prewarmKey(carrier, start.callSid));
    if (phase !== 'verifying') return; // the carrier went away meanwhile
    if (deps.registry.has(start.callSid)) {
      reject('duplicate_call');
      return;
    }
    if (grant.instance !== config.instanceId) {
      // Prepared elsewhere: this instance's own capacity and drain state decide, as for a new call.
      deps.releaseRemotePrewarm({ instance: grant.instance, carrier, callSid: start.callSid });
      metrics.streamPrewarm.inc({ carrier, outcome: 'other_instance' });
      const admission = deps.admitCall();
      if (admission !== 'admitted') {
        decline(start, admission);
        return;
      }
    }
    // The outbound context is read once per call, here, never on the per-frame path.
    let outbound: OutboundContext | null = null;
    if (grant.context !== undefined) {
      try {
        outbound = await outboundContexts(config.streamTokenSecret, deps.store).resolve(
          grant.context,
          carrier,
        );
      } catch (err) {
        log.error({ err: (err as Error).message }, 'store unavailable while reading a call context');
        decline(start, 'store_unavailable');
        return;
      }
      if (phase !== 'verifying') return;
      if (outbound === null) log.warn('the call context is gone or expired: the call has none');
    }
    startSession(start, grant, outbound);
  };

  const onEvent = (event: LegEvent) => {
    switch (phase) {
      case 'awaiting_start':
        if (event.type === 'start') {
          admit(event).catch((err: Error) => {
            log.error({ err }, 'media stream failed to start');
            reject('internal_error', CLOSE.serverError);
          });
        } else if (event.type !== 'ignored') {
          metrics.carrierFramesInvalid.inc({ carrier, reason: `${event.type}_before_start` });
          if (event.type === 'stop') socket.close(CLOSE.normal, 'stream stopped');
        }
        return;
      case 'verifying':
      case 'live':
        if (event.type === 'start') {
          metrics.carrierFramesInvalid.inc({ carrier, reason: 'duplicate_start' });
          return;
        }
        if (phase === 'live') {
          dispatch(event);
        } else if (verifying.length < MAX_VERIFYING_FRAMES) {
          verifying.push(event);
        } else {
          metrics.audioDropped.inc({ buffer: 'stream_verifying' });
        }
        return;
      case 'stopped':
        return;
    }
  };

  socket.on('message', (data: Buffer, isBinary: boolean) => {
    if (phase === 'stopped') return;
    if (phase === 'awaiting_start' && ++framesBeforeStart > MAX_FRAMES_BEFORE_START) {
      reject('frames_before_start');
      return;
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
    if (!Array.isArray(parsed)) {
      onEvent(parsed as LegEvent);
      return;
    }
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
    move('stopped');
    verifying = [];
    session?.end('caller_hangup');
  });
}
