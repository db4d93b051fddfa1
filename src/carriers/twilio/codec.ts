// Twilio Media Streams codec (docs/protocols/twilio.md): JSON text frames in, JSON text frames out,
// in the shape the JSON stream codec reads (../json-stream-codec.ts); what is Twilio's own is here.
import type { AudioEncoding, MediaFormat } from '../../audio/format.js';
import type { LegEvent } from '../../call/carrier-port.js';
import { CarrierFrameError } from '../../errors.js';
import { createJsonStreamCodec, type JsonStreamCodec, type JsonStreamDialect } from '../json-stream-codec.js';
import { decodeBase64Strict, frameReader, isObject, type JsonObject } from '../wire.js';

// Messages name the field at fault and never echo frame content: frames carry caller audio and secrets.
const { objectField, stringField } = frameReader('twilio');

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
export type TwilioCodec = JsonStreamCodec;

const twilioDialect: JsonStreamDialect = {
  carrier: 'twilio',
  fastMedia: INBOUND_MEDIA,

  start(frame) {
    const start = objectField(frame, 'start', 'start');
    const callSid = stringField(start, 'callSid', 'start');
    const streamSid = stringField(start, 'streamSid', 'start');
    const mediaFormat = parseMediaFormat(start);
    const parameters = parseCustomParameters(start);
    const sid = JSON.stringify(streamSid);
    // The stream token comes back as the `token` <Parameter>; the media URL's path carries it too.
    const token = parameters.token;
    return {
      event: { type: 'start', callSid, streamSid, mediaFormat, parameters, ...(token ? { token } : {}) },
      frames: {
        mediaPrefix: `{"event":"media","streamSid":${sid},"media":{"payload":"`,
        markPrefix: `{"event":"mark","streamSid":${sid},"mark":{"name":`,
        markSuffix: '}}',
        clear: `{"event":"clear","streamSid":${sid}}`,
      },
    };
  },

  media(frame) {
    const media = objectField(frame, 'media', 'media');
    const track = media.track;
    if (track !== undefined && typeof track !== 'string') fail('media: track must be a string');
    const text = stringField(media, 'payload', 'media');
    // Only the caller's side is audio for the agent; other tracks are never requested but tolerated.
    if (track !== undefined && track !== 'inbound') return IGNORED_MEDIA;
    const payload = decodeBase64Strict(text);
    if (payload === undefined) fail('media: payload is not valid base64');
    return { type: 'audio', payload };
  },

  events: {
    mark: (frame) => ({
      type: 'mark',
      name: stringField(objectField(frame, 'mark', 'mark'), 'name', 'mark'),
    }),
  },
  // `connected` and any event Twilio adds later carry nothing for the call.
  ignoredEvent: (event) => event,
};

export function createTwilioCodec(): TwilioCodec {
  return createJsonStreamCodec(twilioDialect);
}
