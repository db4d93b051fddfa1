// Twilio Media Streams codec (docs/protocols/twilio.md): JSON text frames in, JSON text frames out.
// Pure parse/serialize, no sockets; one instance per media stream connection.
import type { AudioEncoding, MediaFormat } from '../../audio/format.js';
import type { LegCodec, LegEvent } from '../../call/carrier-port.js';
import { CarrierFrameError } from '../../errors.js';
import { decodeBase64Strict, DTMF_DIGITS, frameReader, isObject, type JsonObject } from '../wire.js';

// Messages name the field at fault and never echo frame content: frames carry caller audio and secrets.
const { jsonEvent, objectField, stringField, matchedPayload } = frameReader('twilio');

function fail(message: string): never {
  throw new CarrierFrameError(`twilio ${message}`);
}

const ENCODINGS: Readonly<Record<string, AudioEncoding>> = Object.freeze({
  'audio/x-mulaw': 'mulaw',
  'audio/x-alaw': 'alaw',
  'audio/l16': 'linear16',
  'audio/x-l16': 'linear16',
});

// Events without a body are shared rather than allocated per frame.
const STOP: LegEvent = Object.freeze({ type: 'stop' });
const IGNORED_MEDIA: LegEvent = Object.freeze({ type: 'ignored', event: 'media' });

function positiveInteger(obj: JsonObject, key: string, fallback: number): number {
  const value = obj[key];
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    fail(`start: mediaFormat.${key} must be a positive integer`);
  }
  return value;
}

function parseMediaFormat(start: JsonObject): MediaFormat {
  const format = start.mediaFormat;
  // Twilio always sends it; without one the stream is Twilio's only bidirectional format.
  if (format === undefined) return { encoding: 'mulaw', sampleRate: 8000, channels: 1 };
  if (!isObject(format)) fail('start: mediaFormat must be an object');
  const name = format.encoding === undefined ? 'audio/x-mulaw' : format.encoding;
  if (typeof name !== 'string') fail('start: mediaFormat.encoding must be a string');
  const encoding = Object.hasOwn(ENCODINGS, name.toLowerCase()) ? ENCODINGS[name.toLowerCase()] : undefined;
  if (encoding === undefined) fail('start: unsupported mediaFormat.encoding');
  return {
    encoding,
    sampleRate: positiveInteger(format, 'sampleRate', 8000),
    channels: positiveInteger(format, 'channels', 1),
  };
}

function parseCustomParameters(start: JsonObject): Record<string, string> {
  const raw = start.customParameters;
  // A null prototype keeps a `__proto__` parameter an ordinary key.
  const params: Record<string, string> = Object.create(null);
  if (raw === undefined) return params;
  if (!isObject(raw)) fail('start: customParameters must be an object');
  for (const [key, value] of Object.entries(raw)) {
    if (typeof value === 'string') params[key] = value;
  }
  return params;
}

/**
 * Twilio's inbound media frame, 50 a second per call, in the key orders Twilio is documented to
 * send (streamSid after media) and the one common SDKs emit (streamSid before): its payload is read
 * without building the JSON object. Anything else, including any frame with escapes or extra keys,
 * takes the general path below.
 */
const INBOUND_MEDIA =
  /^\{"event":"media","sequenceNumber":"\d{1,12}",(?:"streamSid":"[A-Za-z0-9]{1,64}",)?"media":\{"track":"inbound","chunk":"\d{1,12}","timestamp":"\d{1,15}","payload":"([^"\\]*)"\}(?:,"streamSid":"[A-Za-z0-9]{1,64}")?\}$/;

/** Twilio's codec reads one event per frame and writes text frames. */
export interface TwilioCodec extends LegCodec {
  parse(data: Buffer, isBinary: boolean): LegEvent;
  audio(payload: Buffer): string;
  clear(): string;
  mark(name: string): string;
}

export function createTwilioCodec(): TwilioCodec {
  // Set at `start`: the JSON-escaped streamSid is baked into every outbound frame's prefix once.
  let mediaPrefix: string | undefined;
  let markPrefix = '';
  let clearFrame = '';

  function parseStart(frame: JsonObject): LegEvent {
    const start = objectField(frame, 'start', 'start');
    const callSid = stringField(start, 'callSid', 'start');
    const streamSid = stringField(start, 'streamSid', 'start');
    const mediaFormat = parseMediaFormat(start);
    const parameters = parseCustomParameters(start);
    // The first start names the stream; a later one is refused as a duplicate and must not re-address it.
    if (mediaPrefix === undefined) {
      const sid = JSON.stringify(streamSid);
      mediaPrefix = `{"event":"media","streamSid":${sid},"media":{"payload":"`;
      markPrefix = `{"event":"mark","streamSid":${sid},"mark":{"name":`;
      clearFrame = `{"event":"clear","streamSid":${sid}}`;
    }
    // The stream token comes back as the `token` <Parameter>; the media URL's path carries it too.
    const token = parameters.token;
    return { type: 'start', callSid, streamSid, mediaFormat, parameters, ...(token ? { token } : {}) };
  }

  function parseMedia(frame: JsonObject): LegEvent {
    const media = objectField(frame, 'media', 'media');
    const track = media.track;
    if (track !== undefined && typeof track !== 'string') fail('media: track must be a string');
    const text = stringField(media, 'payload', 'media');
    // Only the caller's side is audio for the agent; other tracks are never requested but tolerated.
    if (track !== undefined && track !== 'inbound') return IGNORED_MEDIA;
    const payload = decodeBase64Strict(text);
    if (payload === undefined) fail('media: payload is not valid base64');
    return { type: 'audio', payload };
  }

  function requireStarted(): string {
    if (mediaPrefix === undefined) throw new Error('twilio stream: cannot serialize before start');
    return mediaPrefix;
  }

  return {
    parse(data: Buffer, isBinary: boolean): LegEvent {
      if (isBinary) fail('frame: binary frames are not allowed');
      const text = data.toString('utf8');
      const fast = INBOUND_MEDIA.exec(text);
      if (fast) return { type: 'audio', payload: matchedPayload(fast[1]!) };
      const { frame, event } = jsonEvent(text);
      switch (event) {
        case 'media':
          return parseMedia(frame);
        case 'start':
          return parseStart(frame);
        case 'dtmf': {
          const digit = stringField(objectField(frame, 'dtmf', event), 'digit', event);
          if (!DTMF_DIGITS.has(digit)) fail('dtmf: digit must be one of 0-9 * # A-D');
          return { type: 'dtmf', digit };
        }
        case 'mark':
          return { type: 'mark', name: stringField(objectField(frame, 'mark', event), 'name', event) };
        case 'stop':
          return STOP;
        default:
          // `connected` and any event Twilio adds later carry nothing for the call.
          return { type: 'ignored', event };
      }
    },

    audio(payload: Buffer): string {
      return `${requireStarted()}${payload.toString('base64')}"}}`;
    },

    clear(): string {
      requireStarted();
      return clearFrame;
    },

    mark(name: string): string {
      requireStarted();
      return `${markPrefix}${JSON.stringify(name)}}}`;
    },
  };
}
