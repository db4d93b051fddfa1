// The Telnyx media stream codec (docs/protocols/telnyx.md sections 3 to 5): JSON text frames both
// ways. Pure parse and serialize, one instance per connection. Frames carrying a `sequence_number`
// are put back in order within a small window, since Telnyx does not guarantee it.
import type { AudioEncoding, MediaFormat } from '../../audio/format.js';
import { unsupportedFormatReason } from '../../audio/format.js';
import type { LegCodec, LegEvent } from '../../call/carrier-port.js';
import { CarrierFrameError } from '../../errors.js';
import {
  DTMF_DIGITS,
  eventName,
  frameReader,
  isCarrierId,
  isMarkName,
  isObject,
  type JsonObject,
  readCount,
  readParameters,
  swapBytePairs,
} from '../wire.js';
import { decodeClientState } from './client-state.js';
import { type ReorderOutcome, SequenceReorder } from './reorder.js';

// Messages name the field at fault and never echo frame content: frames carry caller audio and secrets.
const { jsonEvent, objectField, stringField, payload, matchedPayload } = frameReader('telnyx');

function fail(message: string): never {
  throw new CarrierFrameError(`telnyx ${message}`);
}

export interface TelnyxCodecHooks {
  /** Counts frames that arrived out of order. */
  reorder?(outcome: ReorderOutcome): void;
  /** Telnyx reported a streaming error on the socket; code and title are bounded, never audio. */
  streamError?(error: { code: string; title: string; callSid: string | undefined }): void;
}

/** Frames held while a missing one may still arrive: 4 × 20 ms. */
export const REORDER_WINDOW_FRAMES = 4;

const ENCODINGS: Readonly<Record<string, AudioEncoding>> = Object.freeze({
  pcmu: 'mulaw',
  pcma: 'alaw',
  l16: 'linear16',
  // Tolerated spellings: the field's values beyond PCMU/PCMA/L16 are not documented.
  'audio/x-mulaw': 'mulaw',
  'audio/x-alaw': 'alaw',
  'audio/l16': 'linear16',
});

const STOP: LegEvent = Object.freeze({ type: 'stop' });
const NOTHING: readonly LegEvent[] = Object.freeze([]);
const MAX_ERROR_TEXT_CHARS = 200;

function positiveInteger(obj: JsonObject, key: string, fallback: number): number {
  const raw = obj[key];
  if (raw === undefined) return fallback;
  const value = readCount(raw);
  if (value === undefined || value === 0) fail(`start: media_format.${key} must be a positive integer`);
  return value;
}

function parseMediaFormat(start: JsonObject): MediaFormat {
  const format = start.media_format;
  if (format === undefined) fail('start: media_format is missing');
  if (!isObject(format)) fail('start: media_format must be an object');
  const name = format.encoding;
  if (typeof name !== 'string') fail('start: media_format.encoding must be a string');
  const key = name.toLowerCase();
  const encoding = Object.hasOwn(ENCODINGS, key) ? ENCODINGS[key] : undefined;
  if (encoding === undefined) fail('start: media_format.encoding is not PCMU, PCMA or L16');
  const mediaFormat: MediaFormat = {
    encoding,
    sampleRate: positiveInteger(format, 'sample_rate', 8000),
    channels: positiveInteger(format, 'channels', 1),
  };
  const unsupported = unsupportedFormatReason(mediaFormat);
  if (unsupported !== null) fail(`start: media_format is not carried (${unsupported})`);
  return mediaFormat;
}

/** Bounded printable text of an error frame's field, for a log line. */
function errorText(value: unknown): string {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') return '';
  // eslint-disable-next-line no-control-regex -- control characters are what is removed
  return value.replace(/[\u0000-\u001f\u007f]/g, ' ').slice(0, MAX_ERROR_TEXT_CHARS);
}

/**
 * Telnyx's inbound media frame, 50 a second per call, in the documented key order: sequence number
 * and payload are read without building the JSON object. Anything else, including frames with
 * escapes or extra keys, takes the general path.
 */
const INBOUND_MEDIA =
  /^\{"event":"media","sequence_number":(?:"(\d{1,15})"|(\d{1,15})),"media":\{"track":"inbound(?:_track)?","chunk":(?:"\d{1,15}"|\d{1,15}),"timestamp":(?:"\d{1,15}"|\d{1,15}),"payload":"([^"\\]*)"\},"stream_id":"[A-Za-z0-9-]{1,64}"\}$/;

export function createTelnyxCodec(hooks: TelnyxCodecHooks = {}): LegCodec {
  const reorder = new SequenceReorder<LegEvent>(REORDER_WINDOW_FRAMES, (outcome) => hooks.reorder?.(outcome));
  // L16 travels big-endian (RTP order) on this socket and little-endian everywhere in callbridge.
  // Unverified for Telnyx: if it ever arrives little-endian, this flag is what to change.
  let swapLinear16 = false;
  let callSid: string | undefined;

  function audioEvent(payload: Buffer): LegEvent {
    return { type: 'audio', payload: swapLinear16 ? swapBytePairs(payload) : payload };
  }

  /** Puts a sequenced event in order; late audio is dropped, late control events still count. */
  function sequenced(raw: unknown, event: LegEvent): LegEvent | readonly LegEvent[] {
    if (raw === undefined) return event;
    const sequence = readCount(raw);
    if (sequence === undefined) fail(`${event.type}: sequence_number must be a non-negative integer`);
    const result = reorder.push(sequence, event);
    switch (result.kind) {
      case 'due':
        return result.items.length === 1 ? result.items[0]! : result.items;
      case 'late':
        return event.type === 'audio' ? NOTHING : event;
      case 'duplicate':
        return NOTHING;
    }
  }

  function parseStart(frame: JsonObject): LegEvent {
    const start = objectField(frame, 'start', 'start');
    const id = start.call_control_id;
    if (!isCarrierId(id)) fail('start: call_control_id must be a short string');
    const streamId = frame.stream_id ?? start.stream_id;
    if (streamId !== undefined && !isCarrierId(streamId)) fail('start: stream_id must be a short string');
    const mediaFormat = parseMediaFormat(start);
    let parameters: Record<string, string> = Object.create(null);
    if (start.custom_parameters !== undefined && start.custom_parameters !== null) {
      const read = readParameters(start.custom_parameters);
      if (read === undefined) fail('start: custom_parameters must be an object or a list');
      parameters = read;
    }
    // The token is taken out of the parameters: they are logged, the token never is.
    let token: string | undefined = parameters.token;
    delete parameters.token;
    token ??= decodeClientState(start.client_state)?.token;
    if (callSid === undefined) {
      callSid = id;
      swapLinear16 = mediaFormat.encoding === 'linear16';
    }
    const event: LegEvent = {
      type: 'start',
      callSid: id,
      streamSid: streamId ?? id,
      mediaFormat,
      parameters,
    };
    if (token !== undefined) event.token = token;
    return event;
  }

  function parseMedia(frame: JsonObject): LegEvent | readonly LegEvent[] {
    const media = objectField(frame, 'media', 'media');
    const track = media.track;
    if (track !== undefined && typeof track !== 'string') fail('media: track must be a string');
    const bytes = payload(stringField(media, 'payload', 'media'));
    // Only the caller's side is audio for the agent; the other track is never requested.
    if (track !== undefined && track !== 'inbound' && track !== 'inbound_track') {
      return { type: 'ignored', event: 'media' };
    }
    return sequenced(frame.sequence_number, audioEvent(bytes));
  }

  function parseError(frame: JsonObject): LegEvent {
    // Field names unverified: `payload` as documented, `error` tolerated.
    const body = isObject(frame.payload) ? frame.payload : isObject(frame.error) ? frame.error : {};
    hooks.streamError?.({ code: errorText(body.code), title: errorText(body.title ?? body.detail), callSid });
    return { type: 'ignored', event: 'error' };
  }

  return {
    parse(data: Buffer, isBinary: boolean): LegEvent | readonly LegEvent[] {
      if (isBinary) fail('frame: binary frames are not allowed');
      const text = data.toString('utf8');
      const fast = INBOUND_MEDIA.exec(text);
      if (fast) return sequenced(fast[1] ?? fast[2], audioEvent(matchedPayload(fast[3]!)));
      const { frame, event } = jsonEvent(text);
      switch (event) {
        case 'media':
          return parseMedia(frame);
        case 'start':
          return sequenced(frame.sequence_number, parseStart(frame));
        case 'dtmf': {
          const digit = stringField(objectField(frame, 'dtmf', event), 'digit', event);
          if (!DTMF_DIGITS.has(digit)) fail('dtmf: digit must be one of 0-9 * # A-D');
          return sequenced(frame.sequence_number, { type: 'dtmf', digit });
        }
        case 'mark': {
          const name = objectField(frame, 'mark', event).name;
          if (!isMarkName(name)) fail('mark: name must be a string of 1 to 256 characters');
          return sequenced(frame.sequence_number, { type: 'mark', name });
        }
        case 'stop': {
          // Nothing more will fill a gap: what is held goes out first.
          const held = reorder.flush();
          return held.length === 0 ? STOP : [...held, STOP];
        }
        case 'error':
          return parseError(frame);
        default:
          // `connected` and any event Telnyx adds later carry nothing for the call.
          return { type: 'ignored', event: eventName(event) };
      }
    },

    audio(payload: Buffer): string {
      const wire = swapLinear16 ? swapBytePairs(payload) : payload;
      return `{"event":"media","media":{"payload":"${wire.toString('base64')}"}}`;
    },

    clear(): string {
      return '{"event":"clear"}';
    },

    mark(name: string): string {
      return `{"event":"mark","mark":{"name":${JSON.stringify(name)}}}`;
    },
  };
}
