// The Telnyx Call Control requests callbridge makes (docs/protocols/telnyx.md sections 8 and 9): JSON with a
// Bearer API key, each bounded by a timeout. A call that has already ended is not an error when the
// point was to end it.
import { createHash } from 'node:crypto';
import { CarrierApiError, retryableStatus } from '../../errors.js';
import type { CarrierCallState } from '../call-status.js';
import { carrierRequest, jsonExchange } from '../carrier-request.js';
import type { TelnyxStreamCodec } from './config.js';

export interface TelnyxRestOptions {
  /** Base URL, `https://api.telnyx.com` in production. */
  apiUrl: string;
  apiKey: string;
  /** The Call Control application outbound calls are placed through; null: no outbound calls. */
  connectionId: string | null;
  timeoutMs: number;
}

/** Telnyx's answering-machine detection modes (docs/protocols/answering-machine-detection.md section 4). */
export type TelnyxAmdMode = 'detect' | 'detect_beep' | 'greeting_end' | 'premium';

export interface TelnyxOriginateRequest {
  to: string;
  from: string;
  /**
   * A media stream to start with the call. Usually absent: the stream token is bound to the call id,
   * which Telnyx names only in its answer, so the stream is started once the call is answered
   * (`streamingStart`).
   */
  stream?: { mediaUrl: string; codec: TelnyxStreamCodec };
  /** Where Telnyx posts this call's webhooks (`…/carriers/telnyx/events`). */
  webhookUrl: string;
  clientState?: string;
  amd?: TelnyxAmdMode;
  /** Passed as `answering_machine_detection_config` (timeouts and thresholds), as Telnyx names them. */
  amdConfig?: Record<string, number>;
  /** Seconds to ring before giving up. */
  timeoutSecs?: number;
}

export interface TelnyxOriginated {
  callSid: string;
  callLegId: string | undefined;
  callSessionId: string | undefined;
}

export interface TelnyxRest {
  /** Answers an inbound call; with a media URL, the bidirectional stream starts with it. */
  answer(
    callSid: string,
    opts: { mediaUrl?: string; codec: TelnyxStreamCodec; clientState: string },
  ): Promise<void>;
  speak(callSid: string, text: string, clientState: string): Promise<void>;
  /** Plays the recording at `audioUrl` (a WAV the carrier fetches) on an answered call. */
  playback(callSid: string, audioUrl: string, clientState: string): Promise<void>;
  /** Starts the bidirectional media stream of an answered call (an outbound call, once answered). */
  streamingStart(
    callSid: string,
    opts: { mediaUrl: string; codec: TelnyxStreamCodec; clientState: string },
  ): Promise<void>;
  reject(callSid: string): Promise<void>;
  hangup(callSid: string): Promise<void>;
  transfer(callSid: string, target: string): Promise<void>;
  originate(request: TelnyxOriginateRequest): Promise<TelnyxOriginated>;
  /**
   * Telnyx tells only whether the call is alive and how long it lasted: `in-progress` while it is
   * alive (ringing included), `completed` once it has lasted and ended, `failed` once it ended
   * without lasting (busy, unanswered and failed look alike here; the call's `call.hangup` tells
   * them apart), `unknown` for a call Telnyx does not know.
   */
  status(callSid: string): Promise<CarrierCallState>;
}

/** Telnyx's error code for a command on a call that has already ended. */
export const CALL_ALREADY_ENDED = '90018';

/** The stream sampling rate asked for each codec: wideband for L16, telephone rate for G.711. */
export function telnyxStreamRate(codec: TelnyxStreamCodec): number {
  return codec === 'L16' ? 16_000 : 8000;
}

/**
 * Bidirectional RTP streaming of the caller's leg, in one codec both ways
 * (docs/protocols/telnyx.md section 2): `mp3`, the default mode, is one-way in practice.
 */
export function telnyxStreamFields(mediaUrl: string, codec: TelnyxStreamCodec): Record<string, unknown> {
  return {
    stream_url: mediaUrl,
    stream_track: 'inbound_track',
    stream_codec: codec,
    stream_bidirectional_mode: 'rtp',
    stream_bidirectional_codec: codec,
    stream_bidirectional_sampling_rate: telnyxStreamRate(codec),
    stream_bidirectional_target_legs: 'self',
  };
}

/**
 * Telnyx ignores a command whose `command_id` it has already seen: derived from the call and the
 * command, a repeat (a retry, or a second instance answering the same webhook) does nothing twice.
 */
export function telnyxCommandId(callSid: string, command: string, detail = ''): string {
  return createHash('sha256').update(`${callSid}\n${command}\n${detail}`).digest('hex').slice(0, 32);
}

// Only Telnyx's short error code goes into messages: titles and details may quote numbers.
function telnyxErrorCode(body: unknown): string | undefined {
  const errors = (body as { errors?: unknown } | undefined)?.errors;
  if (!Array.isArray(errors)) return undefined;
  const code = (errors[0] as { code?: unknown } | undefined)?.code;
  if (typeof code === 'number' && Number.isInteger(code)) return String(code);
  if (typeof code === 'string' && /^[A-Za-z0-9_-]{1,16}$/.test(code)) return code;
  return undefined;
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

type CallArgs = [
  operation: string,
  method: 'GET' | 'POST',
  url: string,
  body?: Record<string, unknown>,
  opts?: { alreadyEndedIsDone?: boolean },
];

/** One request to the Call Control API: its body on success, else a CarrierApiError naming Telnyx's code. */
async function telnyxCall(
  authorization: string,
  timeoutMs: number,
  operation: string,
  method: 'GET' | 'POST',
  url: string,
  body?: Record<string, unknown>,
  opts: { alreadyEndedIsDone?: boolean } = {},
): Promise<unknown> {
  const response = await carrierRequest({
    carrier: 'telnyx',
    operation,
    method,
    url,
    ...jsonExchange(authorization, body),
    timeoutMs,
  });
  if (response.status >= 200 && response.status < 300) return response.body;
  const carrierCode = telnyxErrorCode(response.body);
  if (opts.alreadyEndedIsDone && response.status === 422 && carrierCode === CALL_ALREADY_ENDED)
    return undefined;
  const detail = carrierCode === undefined ? '' : ` (Telnyx error ${carrierCode})`;
  throw new CarrierApiError('telnyx', `telnyx ${operation}: HTTP ${response.status}${detail}`, {
    retryable: retryableStatus(response.status),
    status: response.status,
    carrierCode,
  });
}

export function createTelnyxRest(options: TelnyxRestOptions): TelnyxRest {
  const base = `${options.apiUrl.replace(/\/+$/, '')}/v2/calls`;
  // Built once; the key lives only in this header, never in a message or URL.
  const authorization = `Bearer ${options.apiKey}`;

  const call = (...args: CallArgs) => telnyxCall(authorization, options.timeoutMs, ...args);

  const action = (callSid: string, name: string) => `${base}/${encodeURIComponent(callSid)}/actions/${name}`;

  return {
    async answer(callSid, opts) {
      const body: Record<string, unknown> = {
        client_state: opts.clientState,
        command_id: telnyxCommandId(callSid, 'answer'),
      };
      if (opts.mediaUrl !== undefined) Object.assign(body, telnyxStreamFields(opts.mediaUrl, opts.codec));
      await call('answer call', 'POST', action(callSid, 'answer'), body);
    },

    async speak(callSid, text, clientState) {
      await call('speak', 'POST', action(callSid, 'speak'), {
        payload: text,
        voice: 'female',
        language: 'en-US',
        client_state: clientState,
        command_id: telnyxCommandId(callSid, 'speak', text),
      });
    },

    async playback(callSid, audioUrl, clientState) {
      await call('play audio', 'POST', action(callSid, 'playback_start'), {
        audio_url: audioUrl,
        client_state: clientState,
        command_id: telnyxCommandId(callSid, 'playback_start', audioUrl),
      });
    },

    async streamingStart(callSid, opts) {
      await call('start stream', 'POST', action(callSid, 'streaming_start'), {
        ...telnyxStreamFields(opts.mediaUrl, opts.codec),
        client_state: opts.clientState,
        command_id: telnyxCommandId(callSid, 'streaming_start'),
      });
    },

    async reject(callSid) {
      await call(
        'reject call',
        'POST',
        action(callSid, 'reject'),
        { cause: 'CALL_REJECTED', command_id: telnyxCommandId(callSid, 'reject') },
        { alreadyEndedIsDone: true },
      );
    },

    async hangup(callSid) {
      await call(
        'hang up call',
        'POST',
        action(callSid, 'hangup'),
        { command_id: telnyxCommandId(callSid, 'hangup') },
        { alreadyEndedIsDone: true },
      );
    },

    async transfer(callSid, target) {
      await call('transfer call', 'POST', action(callSid, 'transfer'), {
        to: target,
        command_id: telnyxCommandId(callSid, 'transfer', target),
      });
    },

    async originate(request) {
      if (options.connectionId === null) {
        throw new CarrierApiError('telnyx', 'telnyx create call: TELNYX_CONNECTION_ID is not set', {
          retryable: false,
        });
      }
      const body: Record<string, unknown> = {
        connection_id: options.connectionId,
        to: request.to,
        from: request.from,
        webhook_url: request.webhookUrl,
        webhook_url_method: 'POST',
        ...(request.stream ? telnyxStreamFields(request.stream.mediaUrl, request.stream.codec) : {}),
      };
      if (request.clientState !== undefined) body.client_state = request.clientState;
      if (request.amd !== undefined) body.answering_machine_detection = request.amd;
      if (request.amd !== undefined && request.amdConfig !== undefined) {
        body.answering_machine_detection_config = request.amdConfig;
      }
      if (request.timeoutSecs !== undefined) body.timeout_secs = request.timeoutSecs;
      const answer = await call('create call', 'POST', base, body);
      const data = (answer as { data?: Record<string, unknown> } | undefined)?.data;
      const callSid = data?.call_control_id;
      if (typeof callSid !== 'string' || callSid === '') {
        // The call may exist already, so a retry could place a second one.
        throw new CarrierApiError('telnyx', 'telnyx create call: response lacks data.call_control_id', {
          retryable: false,
        });
      }
      return {
        callSid,
        callLegId: stringOrUndefined(data?.call_leg_id),
        callSessionId: stringOrUndefined(data?.call_session_id),
      };
    },

    async status(callSid) {
      let answer: unknown;
      try {
        answer = await call('read call status', 'GET', `${base}/${encodeURIComponent(callSid)}`);
      } catch (err) {
        if (err instanceof CarrierApiError && err.status === 404) {
          return { callSid, status: 'unknown', carrierStatus: 'unknown' };
        }
        throw err;
      }
      const data = (answer as { data?: Record<string, unknown> } | undefined)?.data;
      if (typeof data?.is_alive !== 'boolean') {
        throw new CarrierApiError('telnyx', 'telnyx read call status: response lacks data.is_alive', {
          retryable: true,
        });
      }
      if (data.is_alive) return { callSid, status: 'in-progress', carrierStatus: 'alive' };
      const duration = data.call_duration;
      const lasted = typeof duration === 'number' && duration > 0;
      return lasted
        ? { callSid, status: 'completed', carrierStatus: 'ended' }
        : { callSid, status: 'failed', carrierStatus: 'ended unanswered' };
    },
  };
}
