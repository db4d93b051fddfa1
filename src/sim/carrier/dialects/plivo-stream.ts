// Plivo's side of a bidirectional Audio Stream (docs/protocols/plivo.md sections 3 to 5): JSON text
// frames, `start` then one `media` per 20 ms of caller audio, agent audio in `playAudio`, a
// `checkpoint` answered by `playedStream` once the audio before it played, `clearAudio` answered by
// `clearedAudio`. The extra headers of the <Stream> come back in `start` and on every `media`.
import { randomUUID } from 'node:crypto';
import type { MediaFormat } from '../../../audio/format.js';
import type { WireFrame } from '../../../call/carrier-port.js';
import type { SimServerEvent, SimStream } from '../dialect.js';
import { readServerJson, unknownEventWarning } from './server-json.js';

const FRAME_MS = 20;

export interface PlivoStreamSpec {
  url: string;
  callSid: string;
  accountId: string;
  format: MediaFormat;
  extraHeaders: string;
  afterHangup?: () => Promise<void>;
}

const CONTENT_TYPES: Readonly<Record<MediaFormat['encoding'], string>> = Object.freeze({
  mulaw: 'audio/x-mulaw',
  alaw: 'audio/x-alaw',
  linear16: 'audio/x-l16',
});

export function createPlivoSimStream(spec: PlivoStreamSpec): SimStream {
  const streamId = randomUUID();
  const { format } = spec;
  let sequence = 0;
  let chunk = 0;
  const frame = (message: Record<string, unknown>): string =>
    JSON.stringify({ event: message.event, sequenceNumber: ++sequence, streamId, ...message });

  function playAudio(media: unknown): SimServerEvent[] {
    const m = (media ?? {}) as { payload?: unknown; contentType?: unknown; sampleRate?: unknown };
    if (typeof m.payload !== 'string')
      return [{ type: 'warning', message: 'server sent playAudio without media.payload; Plivo ignores it' }];
    const events: SimServerEvent[] = [];
    if (m.contentType !== CONTENT_TYPES[format.encoding] || m.sampleRate !== format.sampleRate) {
      events.push({
        type: 'warning',
        message: `server sent playAudio as ${String(m.contentType)} at ${String(m.sampleRate)} Hz on a ${CONTENT_TYPES[format.encoding]} ${format.sampleRate} Hz stream`,
      });
    }
    const bytes = Buffer.from(m.payload, 'base64');
    if (bytes.toString('base64') !== m.payload)
      events.push({ type: 'warning', message: 'server sent playAudio whose payload is not strict base64' });
    events.push({ type: 'audio', payload: bytes });
    return events;
  }

  function sameStream(message: Record<string, unknown>): SimServerEvent[] {
    return message.streamId === streamId
      ? []
      : [
          {
            type: 'warning',
            message: `server sent "${String(message.event)}" without this stream's streamId; Plivo ignores it`,
          },
        ];
  }

  return {
    url: spec.url,
    headers: { 'user-agent': 'Plivo-Audio-Stream' },
    format,
    callSid: spec.callSid,
    streamSid: streamId,

    opening(): WireFrame[] {
      return [
        frame({
          event: 'start',
          start: {
            callId: spec.callSid,
            streamId,
            accountId: spec.accountId,
            tracks: ['inbound'],
            mediaFormat: { encoding: CONTENT_TYPES[format.encoding], sampleRate: format.sampleRate },
          },
          extra_headers: spec.extraHeaders,
        }),
      ];
    },

    callerAudio(payload: Buffer): WireFrame[] {
      chunk += 1;
      return [
        frame({
          event: 'media',
          media: {
            track: 'inbound',
            timestamp: String(chunk * FRAME_MS),
            chunk,
            payload: payload.toString('base64'),
          },
          extra_headers: spec.extraHeaders,
        }),
      ];
    },

    dtmf(digit: string): WireFrame {
      return frame({ event: 'dtmf', dtmf: { track: 'inbound', digit } });
    },

    serverFrame(data: Buffer, isBinary: boolean): SimServerEvent[] {
      const read = readServerJson(data, isBinary, 'Plivo');
      if (!read.ok) return [{ type: 'warning', message: read.warning }];
      const message = read.message;
      switch (message.event) {
        case 'playAudio':
          return playAudio(message.media);
        case 'checkpoint': {
          const wrong = sameStream(message);
          if (wrong.length > 0) return wrong;
          if (typeof message.name !== 'string')
            return [{ type: 'warning', message: 'server sent a checkpoint without a name; ignored' }];
          return [{ type: 'mark', name: message.name }];
        }
        case 'clearAudio': {
          const wrong = sameStream(message);
          return wrong.length > 0 ? wrong : [{ type: 'clear' }];
        }
        default:
          return [{ type: 'warning', message: unknownEventWarning(message.event) }];
      }
    },

    markPlayed(name: string): WireFrame {
      return frame({ event: 'playedStream', name });
    },

    cleared(): WireFrame {
      return frame({ event: 'clearedAudio' });
    },

    stop(): WireFrame {
      return frame({ event: 'stop' });
    },

    afterHangup: spec.afterHangup,
  };
}
