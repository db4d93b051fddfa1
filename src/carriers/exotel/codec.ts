// Exotel's Voicebot stream codec (docs/protocols/exotel.md): JSON text frames both ways, audio as
// base64 in `media` messages. Numbers arrive as strings (`sample_rate: "8000"`); both forms are read.
// Pure parse/serialize, one instance per media connection, in the shape the JSON stream codec reads
// (../json-stream-codec.ts).
import { type AudioEncoding, type MediaFormat, unsupportedFormatReason } from '../../audio/format.js';
import type { LegCodec } from '../../call/carrier-port.js';
import { CarrierFrameError } from '../../errors.js';
import { createJsonStreamCodec, type JsonStreamDialect } from '../json-stream-codec.js';
import { frameReader, isObject, type JsonObject } from '../wire.js';

// Messages name the field at fault and never echo frame content: frames carry caller audio and secrets.
const { objectField, stringField, payload } = frameReader('exotel');

function fail(message: string): never {
  throw new CarrierFrameError(`exotel ${message}`);
}

const ENCODINGS: Readonly<Record<string, AudioEncoding>> = Object.freeze({
  // Exotel's default: 16-bit signed little-endian PCM.
  'audio/x-raw': 'linear16',
  'audio/l16': 'linear16',
  // The newer μ-law option; its exact name is not documented, so the usual spellings are accepted.
  'audio/x-mulaw': 'mulaw',
  'audio/mulaw': 'mulaw',
  'audio/pcmu': 'mulaw',
  mulaw: 'mulaw',
  ulaw: 'mulaw',
  'audio/x-alaw': 'alaw',
  'audio/pcma': 'alaw',
  alaw: 'alaw',
});

const CALL_SID = /^[A-Za-z0-9_-]{1,64}$/;
const EVENT_NAME = /^[A-Za-z0-9:._-]{1,64}$/;
const MAX_STREAM_SID_CHARS = 128;
const MAX_TOKEN_CHARS = 2048;
const MAX_MARK_CHARS = 256;
const MAX_PARAMETERS = 16;
const MAX_PARAMETER_CHARS = 256;

/** A count Exotel writes as a decimal string, or a number; absent gives the fallback. */
function countField(obj: JsonObject, key: string, event: string, fallback: number): number {
  const value = obj[key];
  if (value === undefined) return fallback;
  if (typeof value === 'string' && /^\d{1,6}$/.test(value)) return Number(value);
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value < 1_000_000) {
    return value;
  }
  fail(`${event}: ${key} must be a decimal integer below 1000000`);
}

function parseMediaFormat(start: JsonObject): MediaFormat {
  const raw = start.media_format;
  // Without one, the stream is Exotel's default: linear PCM at 8 kHz.
  if (raw === undefined) return { encoding: 'linear16', sampleRate: 8000, channels: 1 };
  if (!isObject(raw)) fail('start: media_format must be an object');
  const name = raw.encoding === undefined ? 'audio/x-raw' : raw.encoding;
  if (typeof name !== 'string' || name.length > 64) fail('start: media_format.encoding must be a string');
  const key = name.toLowerCase();
  const encoding = Object.hasOwn(ENCODINGS, key) ? ENCODINGS[key] : undefined;
  if (encoding === undefined) fail('start: unsupported media_format.encoding');
  if (encoding === 'linear16' && countField(raw, 'bit_rate', 'start', 16) !== 16) {
    fail('start: media_format.bit_rate must be 16 for linear PCM');
  }
  const format: MediaFormat = {
    encoding,
    sampleRate: countField(raw, 'sample_rate', 'start', 8000),
    channels: countField(raw, 'channels', 'start', 1),
  };
  const reason = unsupportedFormatReason(format);
  if (reason !== null) fail(`start: media_format ${reason}`);
  return format;
}

/** The wss URL's query parameters, passed back; documented as an object, read as a query string too. */
function parseCustomParameters(start: JsonObject): Record<string, string> {
  const raw = start.custom_parameters;
  // A null prototype keeps a `__proto__` parameter an ordinary key.
  const params: Record<string, string> = Object.create(null);
  if (raw === undefined || raw === null) return params;
  let entries: Array<[string, unknown]>;
  if (typeof raw === 'string') {
    if (raw.length > 4096) fail('start: custom_parameters is too long');
    entries = [...new URLSearchParams(raw)];
  } else if (isObject(raw)) {
    entries = Object.entries(raw);
  } else {
    fail('start: custom_parameters must be an object');
  }
  let kept = 0;
  for (const [key, value] of entries) {
    if (kept === MAX_PARAMETERS) break;
    if (typeof value !== 'string' || key.length > MAX_PARAMETER_CHARS) continue;
    if (value.length > (key === 'token' ? MAX_TOKEN_CHARS : MAX_PARAMETER_CHARS)) continue;
    params[key] = value;
    kept += 1;
  }
  return params;
}

/**
 * Exotel's media message, about ten a second per call, in the documented key order: its payload is
 * read without building the JSON object. Anything else takes the general path.
 */
const INBOUND_MEDIA =
  /^\{"event":"media","sequence_number":"?\d{1,12}"?,"stream_sid":"[A-Za-z0-9_-]{1,128}","media":\{"chunk":"?\d{1,12}"?,"timestamp":"?\d{1,15}"?,"payload":"([^"\\]*)"\}\}$/;

const exotelDialect: JsonStreamDialect = {
  carrier: 'exotel',
  fastMedia: INBOUND_MEDIA,

  start(frame) {
    const start = objectField(frame, 'start', 'start');
    const callSid = stringField(start, 'call_sid', 'start', 64);
    if (!CALL_SID.test(callSid)) fail('start: call_sid is malformed');
    const sidSource = start.stream_sid === undefined ? frame : start;
    const streamSid = stringField(sidSource, 'stream_sid', 'start', MAX_STREAM_SID_CHARS);
    if (streamSid === '') fail('start: stream_sid is empty');
    const mediaFormat = parseMediaFormat(start);
    const parameters = parseCustomParameters(start);
    const token = parameters.token;
    delete parameters.token;
    const sid = JSON.stringify(streamSid);
    return {
      event: { type: 'start', callSid, streamSid, mediaFormat, token, parameters },
      frames: {
        mediaPrefix: `{"event":"media","stream_sid":${sid},"media":{"payload":"`,
        markPrefix: `{"event":"mark","stream_sid":${sid},"mark":{"name":`,
        markSuffix: '}}',
        clear: `{"event":"clear","stream_sid":${sid}}`,
      },
    };
  },

  media(frame) {
    const media = objectField(frame, 'media', 'media');
    return { type: 'audio', payload: payload(stringField(media, 'payload', 'media', 1_000_000)) };
  },

  /** Linear PCM must come in whole samples (before `start`, any byte count is whole). */
  checkAudio(bytes, started) {
    if (bytes.length === 0) fail('media: payload is empty');
    const sampleBytes = started?.encoding === 'linear16' ? 2 : 1;
    if (bytes.length % sampleBytes !== 0) fail('media: payload must hold whole 16-bit samples');
  },

  dtmfDigitChars: 1,
  events: {
    mark: (frame) => ({
      type: 'mark',
      name: stringField(objectField(frame, 'mark', 'mark'), 'name', 'mark', MAX_MARK_CHARS),
    }),
  },
  // `connected` and any event Exotel adds later carry nothing for the call.
  ignoredEvent: (event) => (EVENT_NAME.test(event) ? event : 'unknown'),
};

export function createExotelCodec(): LegCodec {
  return createJsonStreamCodec(exotelDialect);
}
