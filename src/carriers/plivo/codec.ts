// The Plivo Audio Streams codec (docs/protocols/plivo.md sections 3 to 5): JSON text frames both
// ways. `playAudio` carries agent audio, `checkpoint` is the mark (echoed as `playedStream` once the
// audio before it played), `clearAudio` is confirmed by `clearedAudio`. Pure parse and serialize,
// one instance per connection, in the shape the JSON stream codec reads (../json-stream-codec.ts).
import type { AudioEncoding, MediaFormat } from '../../audio/format.js';
import { unsupportedFormatReason } from '../../audio/format.js';
import type { LegCodec, LegEvent } from '../../call/carrier-port.js';
import { CarrierFrameError } from '../../errors.js';
import { createJsonStreamCodec, type JsonStreamDialect } from '../json-stream-codec.js';
import {
  decodeBase64Strict,
  eventName,
  frameReader,
  isCarrierId,
  isMarkName,
  isObject,
  type JsonObject,
  readCount,
} from '../wire.js';

// Messages name the field at fault and never echo frame content: frames carry caller audio and secrets.
const { objectField, stringField } = frameReader('plivo');

function fail(message: string): never {
  throw new CarrierFrameError(`plivo ${message}`);
}

const ENCODINGS: Readonly<Record<string, AudioEncoding>> = Object.freeze({
  'audio/x-mulaw': 'mulaw',
  // Plivo's L16 is taken as little-endian, as Plivo's examples treat it (unverified).
  'audio/x-l16': 'linear16',
  // Not offered by Plivo today; tolerated should it appear.
  'audio/x-alaw': 'alaw',
});

const CONTENT_TYPES: Readonly<Record<AudioEncoding, string>> = Object.freeze({
  mulaw: 'audio/x-mulaw',
  linear16: 'audio/x-l16',
  alaw: 'audio/x-alaw',
});

const CLEARED: LegEvent = Object.freeze({ type: 'cleared' });
const MAX_EXTRA_HEADERS_CHARS = 1024;

function parseMediaFormat(start: JsonObject): MediaFormat {
  const format = start.mediaFormat;
  // Plivo always sends it; without one the stream is what callbridge asked for.
  if (format === undefined) return { encoding: 'mulaw', sampleRate: 8000, channels: 1 };
  if (!isObject(format)) fail('start: mediaFormat must be an object');
  const name = format.encoding ?? 'audio/x-mulaw';
  if (typeof name !== 'string') fail('start: mediaFormat.encoding must be a string');
  const key = name.toLowerCase();
  const encoding = Object.hasOwn(ENCODINGS, key) ? ENCODINGS[key] : undefined;
  if (encoding === undefined) fail('start: mediaFormat.encoding is not audio/x-mulaw or audio/x-l16');
  const rate = format.sampleRate === undefined ? 8000 : readCount(format.sampleRate);
  if (rate === undefined || rate === 0) fail('start: mediaFormat.sampleRate must be a positive integer');
  const mediaFormat: MediaFormat = { encoding, sampleRate: rate, channels: 1 };
  const unsupported = unsupportedFormatReason(mediaFormat);
  if (unsupported !== null) fail(`start: mediaFormat is not carried (${unsupported})`);
  return mediaFormat;
}

/**
 * `extra_headers` as Plivo returns it: a string, seen as `k=v,k2=v2` and as a JSON object
 * (unverified which); read tolerantly, bounded, for logs. Anything else gives no parameters.
 */
export function readExtraHeaders(raw: unknown): Record<string, string> {
  const params: Record<string, string> = Object.create(null);
  if (typeof raw !== 'string' || raw.length > MAX_EXTRA_HEADERS_CHARS) return params;
  const text = raw.trim();
  if (text.startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (isObject(parsed)) {
        for (const [key, value] of Object.entries(parsed)) {
          if (/^[A-Za-z0-9]{1,64}$/.test(key) && typeof value === 'string') params[key] = value;
        }
      }
    } catch {
      // Not JSON after all: nothing to read.
    }
    return params;
  }
  for (const pair of text.split(/[,;]/)) {
    const match = /^\s*([A-Za-z0-9]{1,64})\s*[=:]\s*([A-Za-z0-9]*)\s*$/.exec(pair);
    if (match) params[match[1]!] = match[2]!;
  }
  return params;
}

/**
 * Plivo's inbound media frame, 50 a second per call, in the key order the protocol page gives: its
 * payload is read without building the JSON object. Anything else takes the general path.
 */
const INBOUND_MEDIA =
  /^\{"event":"media","sequenceNumber":(?:\d{1,15}|"\d{1,15}"),"streamId":"[A-Za-z0-9-]{1,64}","media":\{"track":"inbound","timestamp":(?:\d{1,15}|"\d{1,15}"),"chunk":(?:\d{1,15}|"\d{1,15}"),"payload":"([^"\\]*)"\}(?:,"extra_headers":"[A-Za-z0-9=,;:{}' ]{0,1024}")?\}$/;

const plivoDialect: JsonStreamDialect = {
  carrier: 'plivo',
  fastMedia: INBOUND_MEDIA,

  start(frame) {
    const start = objectField(frame, 'start', 'start');
    const callId = start.callId;
    if (!isCarrierId(callId)) fail('start: callId must be a short string');
    const id = start.streamId ?? frame.streamId;
    if (!isCarrierId(id)) fail('start: streamId must be a short string');
    const mediaFormat = parseMediaFormat(start);
    const parameters = readExtraHeaders(frame.extra_headers ?? start.extra_headers);
    const sid = JSON.stringify(id);
    // The stream token travels in the media URL's path: extraHeaders allow only [A-Za-z0-9].
    return {
      event: { type: 'start', callSid: callId, streamSid: id, mediaFormat, parameters },
      frames: {
        mediaPrefix: `{"event":"playAudio","media":{"contentType":"${CONTENT_TYPES[mediaFormat.encoding]}","sampleRate":${mediaFormat.sampleRate},"payload":"`,
        markPrefix: `{"event":"checkpoint","streamId":${sid},"name":`,
        markSuffix: '}',
        clear: `{"event":"clearAudio","streamId":${sid}}`,
      },
    };
  },

  media(frame) {
    const media = objectField(frame, 'media', 'media');
    const track = media.track;
    if (track !== undefined && typeof track !== 'string') fail('media: track must be a string');
    const payload = decodeBase64Strict(stringField(media, 'payload', 'media'));
    if (payload === undefined) fail('media: payload is not valid base64');
    if (track !== undefined && track !== 'inbound') return { type: 'ignored', event: 'media' };
    return { type: 'audio', payload };
  },

  events: {
    playedStream(frame) {
      const name = frame.name;
      if (!isMarkName(name)) fail('playedStream: name must be a string of 1 to 256 characters');
      return { type: 'mark', name };
    },
    clearedAudio: () => CLEARED,
  },
  ignoredEvent: eventName,
};

export function createPlivoCodec(): LegCodec {
  return createJsonStreamCodec(plivoDialect);
}
