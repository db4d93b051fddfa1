// The media WebSocket of any carrier: reads frames through the carrier's codec, admits the stream
// only with a valid stream token (before any agent is dialed: each agent session costs money), and
// hands the call's events to its CallSession.
import type { Logger } from 'pino';
import WebSocket from 'ws';
import type { AgentDialer } from '../agent/dialer.js';
import type { AgentSession } from '../agent/session.js';
import type { CallEventHub } from '../call/events.js';
import { fallbackAudio } from '../call/fallback-audio.js';
import type { PrewarmPool } from '../call/prewarm.js';
import type { CallRecord } from '../call/record.js';
import type { CallRegistry } from '../call/registry.js';
import { type CallInfo, CallSession } from '../call/session.js';
import { bytesPerMs } from '../audio/format.js';
import { checkStreamToken } from '../call/stream-token.js';
import type { Config } from '../config/types.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Store } from '../store/store.js';
import type { CarrierControl, CarrierEvent, CarrierLeg, CarrierStream } from './carrier.js';
import { trackLiveness } from './liveness.js';

export interface CarrierCodec {
  name: string;
  createStream(): CarrierStream;
  /** The carrier's call-control API, when credentials allow it. */
  control: CarrierControl | null;
}

/** An agent session dialed while the voice webhook was answered; `ready` is null if that failed. */
export interface PrewarmedAgent {
  ready: Promise<AgentSession | null>;
  close(): void;
}

export interface MediaDeps {
  config: Config;
  store: Store;
  dial: AgentDialer;
  metrics: Metrics;
  logger: Logger;
  registry: CallRegistry;
  events: CallEventHub;
  prewarm: PrewarmPool<PrewarmedAgent>;
  saveRecord(record: CallRecord): void;
  /** Whether a new call may be taken now (not draining, under the admitted concurrency). */
  admitCall(): 'admitted' | 'draining' | 'at_capacity';
}

/** WebSocket close codes used on media streams (RFC 6455 section 7.4.1). */
export const CLOSE = Object.freeze({
  normal: 1000,
  unsupportedData: 1003,
  policyViolation: 1008,
  tooBig: 1009,
  serverError: 1011,
});

const START_TIMEOUT_MS = 10_000;
/** Junk before `start` is tolerated only briefly: a stream that never starts costs a socket. */
const MAX_INVALID_BEFORE_START = 20;
/** Caller audio held while the token is checked (a store round trip). */
const MAX_VERIFYING_FRAMES = 100;
/** Past this many bytes queued toward the carrier, the phone side is not reading: drop, count. */
const MAX_CARRIER_BACKLOG_BYTES = 1024 * 1024;

type Phase = 'awaiting_start' | 'verifying' | 'live' | 'stopped';

/** The pre-warmed session for this call, if one was dialed for the format the stream brings. */
function claimPrewarmed(
  deps: MediaDeps,
  start: Extract<CarrierEvent, { type: 'start' }>,
): Promise<AgentSession | null> | undefined {
  const prewarmed = deps.prewarm.take(start.callSid);
  if (!prewarmed) return undefined;
  const { encoding, sampleRate } = start.mediaFormat;
  if (encoding !== PREWARM_FORMAT.encoding || sampleRate !== PREWARM_FORMAT.sampleRate) {
    deps.metrics.prewarm.inc({ outcome: 'format_mismatch' });
    prewarmed.close();
    return undefined;
  }
  deps.metrics.prewarm.inc({ outcome: 'used' });
  return prewarmed.ready;
}

/** What phone carriers stream by default, and so what a session dialed before the stream assumes. */
export const PREWARM_FORMAT = Object.freeze({ encoding: 'mulaw', sampleRate: 8000, channels: 1 } as const);

export function handleMediaSocket(socket: WebSocket, codec: CarrierCodec, deps: MediaDeps): void {
  const { metrics, config } = deps;
  const carrier = codec.name;
  const stream = codec.createStream();
  trackLiveness(socket);
  let log = deps.logger.child({ carrier });
  let phase: Phase = 'awaiting_start';
  let session: CallSession | null = null;
  let invalidBeforeStart = 0;
  let verifying: CarrierEvent[] = [];

  const send = (frame: string | Buffer) => {
    if (socket.readyState !== WebSocket.OPEN) return;
    if (socket.bufferedAmount > MAX_CARRIER_BACKLOG_BYTES) {
      metrics.audioDropped.inc({ buffer: 'carrier_socket' });
      return;
    }
    socket.send(frame);
  };
  const closeStream = () => socket.close(CLOSE.normal, 'call ended');
  const { control } = codec;
  let callSid = '';
  const leg: CarrierLeg = {
    sendAudio: (payload) => send(stream.audio(payload)),
    clear: () => send(stream.clear()),
    mark: (name) => send(stream.mark(name)),
    hangup: () => {
      if (!control) {
        // Closing a bidirectional stream ends <Connect>; with no verb after it the call ends.
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
      await control.transfer(callSid, target);
    },
  };

  const reject = (reason: string, code: number = CLOSE.policyViolation) => {
    phase = 'stopped';
    metrics.streamsRejected.inc({ carrier, reason });
    log.warn({ reason }, 'media stream refused');
    socket.close(code, reason);
  };

  const startTimer = setTimeout(() => {
    if (phase === 'awaiting_start') reject('no_start');
  }, START_TIMEOUT_MS);
  startTimer.unref();

  const dispatch = (event: CarrierEvent) => {
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
        phase = 'stopped';
        session.end('caller_hangup');
        socket.close(CLOSE.normal, 'stream stopped');
        break;
      default:
        break;
    }
  };

  const admit = async (start: Extract<CarrierEvent, { type: 'start' }>) => {
    phase = 'verifying';
    clearTimeout(startTimer);
    log = log.child({ callSid: start.callSid, streamSid: start.streamSid });
    const check = checkStreamToken(config.streamTokenSecret, start.customParameters.token, start.callSid);
    if (!check.ok) {
      reject(`token_${check.reason}`);
      return;
    }
    const { grant } = check;
    callSid = start.callSid;
    let first: boolean;
    try {
      first = await deps.store.claimOnce(`stream-token:${grant.nonce}`, config.streamTokenTtlMs);
    } catch (err) {
      log.error({ err: (err as Error).message }, 'store unavailable while admitting a stream');
      reject('store_unavailable', CLOSE.serverError);
      return;
    }
    if (!first) {
      reject('token_replayed');
      return;
    }
    if (phase !== 'verifying') return; // the carrier went away meanwhile
    if (deps.registry.has(start.callSid)) {
      reject('duplicate_call');
      return;
    }
    const profile = config.profiles[grant.profile] ?? config.profiles[config.numbers.default]!;
    const info: CallInfo = {
      callSid: start.callSid,
      streamSid: start.streamSid,
      carrier,
      direction: grant.direction,
      from: grant.from,
      to: grant.to,
      profileName: config.profiles[grant.profile] ? grant.profile : config.numbers.default,
      profile,
      mediaFormat: start.mediaFormat,
    };
    session = new CallSession(info, leg, {
      dial: deps.dial,
      metrics,
      logger: deps.logger.child({ carrier }),
      events: deps.events,
      downlink: { frameBytes: Math.round(bytesPerMs(start.mediaFormat) * 20) },
      maxEarlyAudioBytes: 64 * 1024,
      fallbackAudio: fallbackAudio(profile.fallback.audioFile, start.mediaFormat),
      onEnded: (ended, record) => {
        deps.registry.remove(ended);
        deps.saveRecord(record);
      },
    });
    deps.registry.add(session);
    phase = 'live';
    const held = verifying;
    verifying = [];
    void session.start(claimPrewarmed(deps, start));
    for (const event of held) dispatch(event);
  };

  socket.on('message', (data: Buffer, isBinary: boolean) => {
    if (phase === 'stopped') return;
    let event: CarrierEvent;
    try {
      event = stream.parse(data, isBinary);
    } catch (err) {
      metrics.carrierFramesInvalid.inc({ carrier, reason: isBinary ? 'binary' : 'unreadable' });
      log.debug({ err: (err as Error).message }, 'unreadable carrier frame');
      if (phase === 'awaiting_start' && ++invalidBeforeStart > MAX_INVALID_BEFORE_START) {
        reject('invalid_frames', isBinary ? CLOSE.unsupportedData : CLOSE.policyViolation);
      }
      return;
    }
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
    }
  });

  socket.on('error', (err) => log.debug({ err: err.message }, 'carrier socket error'));
  socket.on('close', () => {
    clearTimeout(startTimer);
    phase = 'stopped';
    verifying = [];
    session?.end('caller_hangup');
  });
}
