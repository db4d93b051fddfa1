// Vonage's WebSocket media codec (docs/protocols/vonage.md): caller audio arrives as binary frames
// of 16-bit little-endian PCM, control as JSON text frames; agent audio leaves as binary frames.
// Pure parse/serialize, one instance per media connection. Vonage sends no stop frame: the close
// ends the stream.
import { type MediaFormat, unsupportedFormatReason } from '../../audio/format.js';
import type { LegCodec, LegEvent } from '../../call/carrier-port.js';
import { CarrierFrameError } from '../../errors.js';
import { DTMF_DIGITS, frameReader, isObject, type JsonObject } from '../wire.js';

// Messages name the field at fault and never echo frame content: frames carry caller audio and secrets.
const { jsonEvent, stringField } = frameReader('vonage');

function fail(message: string): never {
  throw new CarrierFrameError(`vonage ${message}`);
}

/** The NCCO `headers` that come back in `websocket:connected`: the call's uuid and its stream token. */
export const CALL_HEADER = 'call_uuid';
export const TOKEN_HEADER = 'token';

export const CALL_UUID = /^[A-Za-z0-9-]{1,64}$/;
/** Event names are echoed in `ignored` events (and so in logs and metrics) only when they look like one. */
const EVENT_NAME = /^[A-Za-z0-9:._-]{1,64}$/;
const MAX_TOKEN_CHARS = 2048;
const MAX_MARK_CHARS = 256;
/** Extra headers kept for logs; the rest are dropped, never refused. */
const MAX_PARAMETERS = 16;
const MAX_PARAMETER_KEY_CHARS = 64;
const MAX_PARAMETER_VALUE_CHARS = 256;

const CLEARED: LegEvent = Object.freeze({ type: 'cleared' });
const CLEAR_FRAME = '{"action":"clear"}';

/** `audio/l16;rate=16000`: linear PCM at the given rate, the only media type Vonage streams. */
export function parseContentType(value: string): MediaFormat {
  const [type = '', ...params] = value.split(';').map((part) => part.trim());
  if (type.toLowerCase() !== 'audio/l16') fail('websocket:connected: content-type must be audio/l16');
  let rate: number | undefined;
  for (const param of params) {
    const [key = '', raw = ''] = param.split('=').map((part) => part.trim());
    if (key.toLowerCase() !== 'rate') continue;
    if (!/^\d{1,6}$/.test(raw)) fail('websocket:connected: content-type rate must be an integer');
    rate = Number(raw);
  }
  if (rate === undefined) fail('websocket:connected: content-type has no rate');
  const format: MediaFormat = { encoding: 'linear16', sampleRate: rate, channels: 1 };
  const reason = unsupportedFormatReason(format);
  if (reason !== null) fail(`websocket:connected: content-type ${reason}`);
  return format;
}

function parseConnected(frame: JsonObject): LegEvent {
  const mediaFormat = parseContentType(stringField(frame, 'content-type', 'websocket:connected', 128));
  const callSid = stringField(frame, CALL_HEADER, 'websocket:connected', 64);
  if (!CALL_UUID.test(callSid)) fail(`websocket:connected: ${CALL_HEADER} is malformed`);
  const rawToken = frame[TOKEN_HEADER];
  let token: string | undefined;
  if (rawToken !== undefined)
    token = stringField(frame, TOKEN_HEADER, 'websocket:connected', MAX_TOKEN_CHARS);
  // A null prototype keeps a `__proto__` header an ordinary key.
  const parameters: Record<string, string> = Object.create(null);
  let kept = 0;
  for (const [key, value] of Object.entries(frame)) {
    if (key === 'event' || key === 'content-type' || key === TOKEN_HEADER) continue;
    if (kept === MAX_PARAMETERS) break;
    if (typeof value !== 'string' || key.length > MAX_PARAMETER_KEY_CHARS) continue;
    if (value.length > MAX_PARAMETER_VALUE_CHARS) continue;
    parameters[key] = value;
    kept += 1;
  }
  // Vonage has no stream id of its own: the call's uuid names the stream too.
  return { type: 'start', callSid, streamSid: callSid, mediaFormat, token, parameters };
}

function parseNotify(frame: JsonObject): LegEvent {
  const payload = frame.payload;
  if (!isObject(payload)) fail('websocket:notify: payload must be an object');
  // A notify without our mark name was not sent by us: nothing for the call.
  if (payload.mark === undefined) return { type: 'ignored', event: 'websocket:notify' };
  return { type: 'mark', name: stringField(payload, 'mark', 'websocket:notify', MAX_MARK_CHARS) };
}

function parseText(data: Buffer): LegEvent {
  const { frame, event } = jsonEvent(data.toString('utf8'));
  switch (event) {
    case 'websocket:connected':
      return parseConnected(frame);
    case 'websocket:dtmf': {
      const digit = stringField(frame, 'digit', event, 1);
      if (!DTMF_DIGITS.has(digit)) fail('websocket:dtmf: digit must be one of 0-9 * # A-D');
      return { type: 'dtmf', digit };
    }
    case 'websocket:cleared':
      return CLEARED;
    case 'websocket:notify':
      return parseNotify(frame);
    default:
      // Events Vonage adds later (or errors it reports) carry nothing the call acts on.
      return { type: 'ignored', event: EVENT_NAME.test(event) ? event : 'unknown' };
  }
}

export function createVonageCodec(): LegCodec {
  return {
    parse(data: Buffer, isBinary: boolean): LegEvent {
      if (!isBinary) return parseText(data);
      // 16-bit samples: an odd length cannot be PCM. The bytes go on untouched, as the agent takes them.
      if (data.length === 0 || data.length % 2 !== 0) fail('audio: frame must hold whole 16-bit samples');
      return { type: 'audio', payload: data };
    },

    /** One binary message per call: the downlink has cut the audio to one 20 ms frame. */
    audio(payload: Buffer): Buffer {
      return payload;
    },

    clear(): string {
      return CLEAR_FRAME;
    },

    /** Vonage echoes the payload as `websocket:notify` once the audio queued before it has played. */
    mark(name: string): string {
      return JSON.stringify({ action: 'notify', payload: { mark: name } });
    },
  };
}
