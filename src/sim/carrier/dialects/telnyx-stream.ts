// Telnyx's side of a bidirectional media stream (docs/protocols/telnyx.md sections 3 to 5): JSON
// text frames, `connected` then `start`, one `media` per 20 ms of caller audio with a
// `sequence_number` (as a string), agent audio in `media` frames of 20 ms to 30 s, marks echoed once
// the audio before them played, `clear` flushing queued audio (and releasing marks) with no
// confirmation. L16 travels big-endian here (RTP order), as the server's codec assumes (unverified).
import { randomUUID } from 'node:crypto';
import type { MediaFormat } from '../../../audio/format.js';
import type { WireFrame } from '../../../call/carrier-port.js';
import type { SimServerEvent, SimStream } from '../dialect.js';
import { durationMs } from './audio.js';
import { markName, readServerJson, unknownEventWarning } from './server-json.js';

const FRAME_MS = 20;
const MAX_MESSAGE_MS = 30_000;

export interface TelnyxStreamSpec {
  url: string;
  callSid: string;
  from: string;
  to: string;
  format: MediaFormat;
  /** The `client_state` of the answer, returned in `start` as Telnyx does. */
  clientState: string | null;
  afterHangup?: () => Promise<void>;
}

/** The format a Telnyx answer asks for, or why the phone cannot play it. */
export function telnyxAnswerFormat(answer: Record<string, unknown>): MediaFormat | Error {
  const codec = answer.stream_bidirectional_codec ?? 'PCMU';
  const rate = answer.stream_bidirectional_sampling_rate ?? (codec === 'L16' ? 16_000 : 8000);
  if (typeof rate !== 'number' || ![8000, 16000, 24000].includes(rate)) {
    return new Error(
      'stream_bidirectional_sampling_rate must be 8000, 16000 or 24000 for the simulated phone',
    );
  }
  switch (codec) {
    case 'PCMU':
      return { encoding: 'mulaw', sampleRate: 8000, channels: 1 };
    case 'PCMA':
      return { encoding: 'alaw', sampleRate: 8000, channels: 1 };
    case 'L16':
      return { encoding: 'linear16', sampleRate: rate, channels: 1 };
    default:
      return new Error(
        `stream_bidirectional_codec ${JSON.stringify(codec)} is not played by the simulated phone`,
      );
  }
}

const WIRE_ENCODINGS: Readonly<Record<MediaFormat['encoding'], string>> = Object.freeze({
  mulaw: 'PCMU',
  alaw: 'PCMA',
  linear16: 'L16',
});

export function createTelnyxSimStream(spec: TelnyxStreamSpec): SimStream {
  const streamId = randomUUID();
  const userId = randomUUID();
  const { format } = spec;
  let sequence = 0;
  let chunk = 0;
  const next = () => String(++sequence);
  const bigEndian = (littleEndian: Buffer) =>
    format.encoding === 'linear16' ? Buffer.from(littleEndian).swap16() : littleEndian;
  const frame = (message: Record<string, unknown>): string =>
    JSON.stringify({ ...message, stream_id: streamId });

  function serverMedia(media: unknown): SimServerEvent[] {
    const payload = (media as { payload?: unknown } | undefined)?.payload;
    if (typeof payload !== 'string')
      return [{ type: 'warning', message: 'server sent media without media.payload; Telnyx ignores it' }];
    const bytes = Buffer.from(payload, 'base64');
    const events: SimServerEvent[] = [];
    if (bytes.toString('base64') !== payload)
      events.push({ type: 'warning', message: 'server sent media whose payload is not strict base64' });
    const ms = durationMs(bytes.length, format);
    if (ms < FRAME_MS || ms > MAX_MESSAGE_MS) {
      events.push({
        type: 'warning',
        message: `server sent ${ms.toFixed(1)} ms of audio in one message; Telnyx takes 20 ms to 30 s`,
      });
    }
    if (format.encoding === 'linear16' && bytes.length % 2 !== 0) {
      events.push({ type: 'warning', message: 'server sent L16 audio with an odd number of bytes' });
    }
    const wire = format.encoding === 'linear16' ? bytes.subarray(0, bytes.length & ~1) : bytes;
    // L16 is big-endian on Telnyx's wire: back to the agent's byte order.
    events.push({ type: 'audio', payload: bigEndian(wire) });
    return events;
  }

  return {
    url: spec.url,
    headers: { 'user-agent': 'Telnyx-Media-Streaming' },
    format,
    callSid: spec.callSid,
    streamSid: streamId,

    opening(): WireFrame[] {
      return [
        JSON.stringify({ event: 'connected', version: '1.0.0' }),
        frame({
          event: 'start',
          sequence_number: next(),
          start: {
            user_id: userId,
            call_control_id: spec.callSid,
            call_session_id: randomUUID(),
            from: spec.from,
            to: spec.to,
            tags: [],
            client_state: spec.clientState,
            custom_parameters: {},
            media_format: {
              encoding: WIRE_ENCODINGS[format.encoding],
              sample_rate: format.sampleRate,
              channels: 1,
            },
          },
        }),
      ];
    },

    callerAudio(audio: Buffer): WireFrame[] {
      chunk += 1;
      const payload = bigEndian(audio);
      return [
        frame({
          event: 'media',
          sequence_number: next(),
          media: {
            track: 'inbound',
            chunk: String(chunk),
            timestamp: String((chunk - 1) * FRAME_MS),
            payload: payload.toString('base64'),
          },
        }),
      ];
    },

    dtmf(digit: string): WireFrame {
      return frame({ event: 'dtmf', sequence_number: next(), dtmf: { digit } });
    },

    serverFrame(data: Buffer, isBinary: boolean): SimServerEvent[] {
      const read = readServerJson(data, isBinary, 'Telnyx');
      if (!read.ok) return [{ type: 'warning', message: read.warning }];
      const message = read.message;
      switch (message.event) {
        case 'media':
          return serverMedia(message.media);
        case 'mark': {
          const name = markName(message);
          if (name === undefined)
            return [{ type: 'warning', message: 'server sent a mark without mark.name; ignored' }];
          return [{ type: 'mark', name }];
        }
        case 'clear':
          return [{ type: 'clear' }];
        default:
          return [{ type: 'warning', message: unknownEventWarning(message.event) }];
      }
    },

    markPlayed(name: string): WireFrame {
      return frame({ event: 'mark', sequence_number: next(), mark: { name } });
    },

    // Telnyx sends no confirmation of a clear: the marks it released are the only echo.
    cleared: () => null,

    stop(): WireFrame {
      return frame({
        event: 'stop',
        sequence_number: next(),
        stop: { user_id: userId, call_control_id: spec.callSid },
      });
    },

    afterHangup: spec.afterHangup,
  };
}
