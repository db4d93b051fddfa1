// The codec of the carriers whose media streams have Twilio's shape (Twilio, Plivo, Exotel; see
// docs/protocols/): JSON text frames both ways, an `event` name in each, base64 audio in `media`,
// `start` naming the stream that every frame sent back carries, and `stop`. A carrier supplies
// what differs (its `start`, its names for marks and clears, its media fast path) as a dialect;
// parsing and serializing are written once here. Pure, one instance per media connection.
import type { MediaFormat } from '../audio/format.js';
import type { LegCodec, LegEvent } from '../call/carrier-port.js';
import { DTMF_DIGITS, frameReader, type JsonObject } from './wire.js';

type StartEvent = Extract<LegEvent, { type: 'start' }>;

/** The frames sent on one stream, fixed at its first `start` (prefixes hold the escaped stream id). */
export interface OutboundFrames {
  /** Everything before the base64 audio; the audio frame ends with `"}}`. */
  mediaPrefix: string;
  /** Everything before the JSON string of a mark's name. */
  markPrefix: string;
  /** What closes a mark frame after its name (`}}`, or `}` where the name sits at the top). */
  markSuffix: string;
  clear: string;
}

export interface JsonStreamDialect {
  /** The carrier's name, at the head of every frame error. */
  carrier: string;
  /**
   * The inbound media frame as the carrier is documented to send it, its base64 payload in group 1:
   * read without building the JSON object, since it comes 50 times a second per call. Anything else,
   * including frames with escapes or extra keys, takes the general path.
   */
  fastMedia: RegExp;
  /** Reads `start`: the event, and the frames this stream is sent. */
  start(frame: JsonObject): { event: StartEvent; frames: OutboundFrames };
  /** Reads a `media` frame that missed the fast path. */
  media(frame: JsonObject, started: MediaFormat | undefined): LegEvent;
  /** Checks caller audio once decoded (whole samples, say); throws a frame error. */
  checkAudio?(payload: Buffer, started: MediaFormat | undefined): void;
  /** Longest DTMF `digit` read before the digit check; unset: any string. */
  dtmfDigitChars?: number;
  /** Events of its own (marks echoed, clears confirmed): name → reader. */
  events: Readonly<Record<string, (frame: JsonObject) => LegEvent>>;
  /** The name an unknown event is counted under (bounded: names come from the wire). */
  ignoredEvent(event: string): string;
}

/** A Twilio-shaped codec reads one event per frame and writes text frames. */
export interface JsonStreamCodec extends LegCodec {
  parse(data: Buffer, isBinary: boolean): LegEvent;
  audio(payload: Buffer): string;
  clear(): string;
  mark(name: string): string;
}

// Events without a body are shared rather than allocated per frame.
const STOP: LegEvent = Object.freeze({ type: 'stop' });

export function createJsonStreamCodec(dialect: JsonStreamDialect): JsonStreamCodec {
  // Messages name the field at fault and never echo frame content: frames carry caller audio and secrets.
  const { fail, jsonEvent, objectField, stringField, matchedPayload } = frameReader(dialect.carrier);
  // Set at the first `start`; a later one is refused as a duplicate and must not re-address the stream.
  let frames: OutboundFrames | undefined;
  let format: MediaFormat | undefined;

  function audioEvent(payload: Buffer): LegEvent {
    dialect.checkAudio?.(payload, format);
    return { type: 'audio', payload };
  }

  function parseStart(frame: JsonObject): LegEvent {
    const started = dialect.start(frame);
    if (frames === undefined) {
      frames = started.frames;
      format = started.event.mediaFormat;
    }
    return started.event;
  }

  function parseDtmf(frame: JsonObject, event: string): LegEvent {
    const digit = stringField(objectField(frame, 'dtmf', event), 'digit', event, dialect.dtmfDigitChars);
    if (!DTMF_DIGITS.has(digit)) fail('dtmf: digit must be one of 0-9 * # A-D');
    return { type: 'dtmf', digit };
  }

  function started(): OutboundFrames {
    if (frames === undefined) throw new Error(`${dialect.carrier} stream: cannot serialize before start`);
    return frames;
  }

  return {
    parse(data: Buffer, isBinary: boolean): LegEvent {
      if (isBinary) fail('frame: binary frames are not allowed');
      const text = data.toString('utf8');
      const fast = dialect.fastMedia.exec(text);
      if (fast) return audioEvent(matchedPayload(fast[1]!));
      const { frame, event } = jsonEvent(text);
      switch (event) {
        case 'media': {
          const read = dialect.media(frame, format);
          return read.type === 'audio' ? audioEvent(read.payload) : read;
        }
        case 'start':
          return parseStart(frame);
        case 'dtmf':
          return parseDtmf(frame, event);
        case 'stop':
          return STOP;
        default: {
          const own = Object.hasOwn(dialect.events, event) ? dialect.events[event] : undefined;
          // `connected` and any event the carrier adds later carry nothing for the call.
          return own ? own(frame) : { type: 'ignored', event: dialect.ignoredEvent(event) };
        }
      }
    },

    audio(payload: Buffer): string {
      return `${started().mediaPrefix}${payload.toString('base64')}"}}`;
    },

    clear(): string {
      return started().clear;
    },

    mark(name: string): string {
      const { markPrefix, markSuffix } = started();
      return `${markPrefix}${JSON.stringify(name)}${markSuffix}`;
    },
  };
}
