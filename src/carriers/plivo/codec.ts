// The Plivo Audio Streams codec (docs/protocols/plivo.md sections 3 to 5): JSON text frames both
// ways. `playAudio` carries agent audio, `checkpoint` is the mark (echoed as `playedStream` once the
// audio before it played), `clearAudio` is confirmed by `clearedAudio`. Pure parse and serialize,
// one instance per connection.
import type { AudioEncoding, MediaFormat } from '../../audio/format.js';
import { unsupportedFormatReason } from '../../audio/format.js';
import type { LegCodec, LegEvent } from '../../call/carrier-port.js';
import { CarrierFrameError } from '../../errors.js';
import {
  decodeBase64Strict,
  DTMF_DIGITS,
  eventName,
  frameReader,
  isCarrierId,
  isMarkName,
  isObject,
  type JsonObject,
  readCount,
} from '../wire.js';

// Messages name the field at fault and never echo frame content: frames carry caller audio and secrets.
const { jsonEvent, objectField, stringField, matchedPayload } = frameReader('plivo');

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

const STOP: LegEvent = Object.freeze({ type: 'stop' });
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

export function createPlivoCodec(): LegCodec {
  // Set at `start`: the stream id and the format name go into every outbound frame.
  let streamId: string | undefined;
  let mediaPrefix = '';
  let clearFrame = '';
  let checkpointPrefix = '';

  function parseStart(frame: JsonObject): LegEvent {
    const start = objectField(frame, 'start', 'start');
    const callId = start.callId;
    if (!isCarrierId(callId)) fail('start: callId must be a short string');
    const id = start.streamId ?? frame.streamId;
    if (!isCarrierId(id)) fail('start: streamId must be a short string');
    const mediaFormat = parseMediaFormat(start);
    const parameters = readExtraHeaders(frame.extra_headers ?? start.extra_headers);
    // The first start names the stream; a later one is refused as a duplicate and must not re-address it.
    if (streamId === undefined) {
      streamId = id;
      const sid = JSON.stringify(id);
      mediaPrefix = `{"event":"playAudio","media":{"contentType":"${CONTENT_TYPES[mediaFormat.encoding]}","sampleRate":${mediaFormat.sampleRate},"payload":"`;
      clearFrame = `{"event":"clearAudio","streamId":${sid}}`;
      checkpointPrefix = `{"event":"checkpoint","streamId":${sid},"name":`;
    }
    // The stream token travels in the media URL's path: extraHeaders allow only [A-Za-z0-9].
    return { type: 'start', callSid: callId, streamSid: id, mediaFormat, parameters };
  }

  function parseMedia(frame: JsonObject): LegEvent {
    const media = objectField(frame, 'media', 'media');
    const track = media.track;
    if (track !== undefined && typeof track !== 'string') fail('media: track must be a string');
    const payload = decodeBase64Strict(stringField(media, 'payload', 'media'));
    if (payload === undefined) fail('media: payload is not valid base64');
    if (track !== undefined && track !== 'inbound') return { type: 'ignored', event: 'media' };
    return { type: 'audio', payload };
  }

  function requireStarted(): void {
    if (streamId === undefined) throw new Error('plivo stream: cannot serialize before start');
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
        case 'playedStream': {
          const name = frame.name;
          if (!isMarkName(name)) fail('playedStream: name must be a string of 1 to 256 characters');
          return { type: 'mark', name };
        }
        case 'clearedAudio':
          return CLEARED;
        case 'stop':
          return STOP;
        default:
          return { type: 'ignored', event: eventName(event) };
      }
    },

    audio(payload: Buffer): string {
      requireStarted();
      return `${mediaPrefix}${payload.toString('base64')}"}}`;
    },

    clear(): string {
      requireStarted();
      return clearFrame;
    },

    mark(name: string): string {
      requireStarted();
      return `${checkpointPrefix}${JSON.stringify(name)}}`;
    },
  };
}
