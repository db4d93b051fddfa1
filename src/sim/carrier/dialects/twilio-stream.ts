// Twilio's side of a bidirectional Media Stream (docs/protocols/twilio.md): `connected`, then
// `start` carrying the TwiML's <Parameter>s, then one `media` message per 20 ms μ-law frame, every
// message after `connected` numbered; marks echoed by name; `stop` when the caller hangs up. From
// the server it reads `media`, `mark` and `clear`, and reports what Twilio would ignore.
import { MULAW_8K } from '../../../audio/format.js';
import type { WireFrame } from '../../../call/carrier-port.js';
import type { SimServerEvent, SimStream } from '../dialect.js';
import { markName, readServerJson, unknownEventWarning } from './server-json.js';

const FRAME_MS = 20;

export interface TwilioStreamIds {
  url: string;
  headers: Record<string, string>;
  accountSid: string;
  callSid: string;
  streamSid: string;
  customParameters: Record<string, string>;
}

type Json = Record<string, unknown>;

export function twilioSimStream(ids: TwilioStreamIds): SimStream {
  const { accountSid, callSid, streamSid } = ids;
  let sequence = 0;
  let chunk = 0;
  const next = () => String(++sequence);
  const sid = JSON.stringify(streamSid);
  const warning = (message: string): SimServerEvent[] => [{ type: 'warning', message }];

  const media = (payload: Json): SimServerEvent[] => {
    const text = (payload as { payload?: unknown } | undefined)?.payload;
    if (typeof text !== 'string') return warning('server sent media without media.payload; ignored');
    const audio = Buffer.from(text, 'base64');
    const events: SimServerEvent[] = [{ type: 'audio', payload: audio }];
    if (audio.toString('base64') !== text) {
      events.unshift({ type: 'warning', message: 'server sent media whose payload is not strict base64' });
    }
    return events;
  };

  return {
    url: ids.url,
    headers: ids.headers,
    format: { ...MULAW_8K },
    callSid,
    streamSid,
    parameters: ids.customParameters,

    opening(): WireFrame[] {
      return [
        JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }),
        JSON.stringify({
          event: 'start',
          sequenceNumber: next(),
          streamSid,
          start: {
            accountSid,
            streamSid,
            callSid,
            tracks: ['inbound'],
            mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
            customParameters: ids.customParameters,
          },
        }),
      ];
    },

    callerAudio(payload: Buffer): WireFrame[] {
      chunk += 1;
      // 50 a second per call: written directly rather than through JSON.stringify.
      return [
        `{"event":"media","sequenceNumber":"${next()}","streamSid":${sid},"media":{"track":"inbound","chunk":"${chunk}","timestamp":"${(chunk - 1) * FRAME_MS}","payload":"${payload.toString('base64')}"}}`,
      ];
    },

    dtmf(digit: string): WireFrame {
      return JSON.stringify({
        event: 'dtmf',
        sequenceNumber: next(),
        streamSid,
        dtmf: { track: 'inbound_track', digit },
      });
    },

    serverFrame(data: Buffer, isBinary: boolean): SimServerEvent[] {
      const read = readServerJson(data, isBinary, 'Twilio');
      if (!read.ok) return warning(read.warning);
      const message = read.message;
      const event = message.event;
      if ((event === 'media' || event === 'mark' || event === 'clear') && message.streamSid !== streamSid) {
        return warning(`server sent "${event}" without this stream's streamSid; Twilio ignores it`);
      }
      switch (event) {
        case 'media':
          return media(message.media as Json);
        case 'mark': {
          const name = markName(message);
          if (name === undefined) return warning('server sent a mark without mark.name; ignored');
          return [{ type: 'mark', name }];
        }
        case 'clear':
          return [{ type: 'clear' }];
        default:
          return warning(unknownEventWarning(event));
      }
    },

    markPlayed(name: string): WireFrame {
      return JSON.stringify({ event: 'mark', sequenceNumber: next(), streamSid, mark: { name } });
    },

    // Twilio confirms a clear only by echoing the pending marks.
    cleared: () => null,

    stop(): WireFrame {
      return JSON.stringify({
        event: 'stop',
        sequenceNumber: next(),
        streamSid,
        stop: { accountSid, callSid },
      });
    },
  };
}
