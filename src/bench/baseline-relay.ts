// The bench's baseline (its own process): the barest relay that still carries a call from each
// carrier to a voice agent, so that callbridge's figures have a floor measured on the same load.
//
// What "bare" keeps, because audio cannot pass without it: each carrier's answer (a fixed TwiML,
// Plivo XML, Vonage NCCO or Exotel URL naming the media stream; for Telnyx, which answers through
// its API, the few simulated-API reads the carrier makes), the media WebSocket, JSON.parse of every
// text frame, base64 decoding of each media payload into one binary agent message (Vonage's binary
// frames go as they are), one agent WebSocket per call opened at the stream's start with the auth
// header and a `Settings` in the carrier's format, caller audio queued until that socket is open,
// each agent binary message wrapped as the carrier takes it, and `UserStartedSpeaking` turned into
// the carrier's clear (barge-in is measured). Where a carrier refuses other sizes, agent audio is
// cut to them: one 20 ms frame a message for Vonage, chunks of at least 3,200 bytes for Exotel.
//
// What it leaves out, all of it callbridge's work: stream tokens and their single-use claim in the
// store, signature checks, waiting for `SettingsApplied`, 20 ms framing, pacing, marks and
// heard-audio tracking, speech/silence detection, metrics, logs, call state, records, bounds on
// every buffer.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import WebSocket, { WebSocketServer } from 'ws';
import { onParentMessage, toParent } from './ipc.js';

const [agentUrl = '', apiKey = ''] = process.argv.slice(2);
const MAX_PAYLOAD_BYTES = 64 * 1024;
const VONAGE_FRAME_BYTES = 640;
const EXOTEL_MIN_CHUNK_BYTES = 3_200;

let base = '';
let wsBase = '';

/** One carrier's media frames, as the relay reads and writes them. */
interface Framing {
  format: { encoding: 'mulaw' | 'linear16'; sample_rate: number };
  /** A text frame's meaning: where the stream starts (and what addresses it), audio, or its end. */
  read(frame: Record<string, unknown>): { start?: string; audio?: Buffer; stop?: true };
  /** Agent audio → the frames the carrier takes. */
  audio(data: Buffer, sid: string): Array<string | Buffer>;
  clear(sid: string): string;
}

const payload = (frame: Record<string, unknown>) =>
  Buffer.from(String((frame.media as { payload?: string }).payload), 'base64');

const FRAMINGS: Record<string, Framing> = {
  twilio: {
    format: { encoding: 'mulaw', sample_rate: 8000 },
    read: (f) =>
      f.event === 'media'
        ? { audio: payload(f) }
        : f.event === 'start'
          ? { start: String((f.start as { streamSid: string }).streamSid) }
          : f.event === 'stop'
            ? { stop: true }
            : {},
    audio: (data, sid) => [
      `{"event":"media","streamSid":"${sid}","media":{"payload":"${data.toString('base64')}"}}`,
    ],
    clear: (sid) => `{"event":"clear","streamSid":"${sid}"}`,
  },
  telnyx: {
    format: { encoding: 'mulaw', sample_rate: 8000 },
    read: (f) =>
      f.event === 'media'
        ? { audio: payload(f) }
        : f.event === 'start'
          ? { start: '' }
          : f.event === 'stop'
            ? { stop: true }
            : {},
    audio: (data) => [`{"event":"media","media":{"payload":"${data.toString('base64')}"}}`],
    clear: () => '{"event":"clear"}',
  },
  plivo: {
    format: { encoding: 'mulaw', sample_rate: 8000 },
    read: (f) =>
      f.event === 'media'
        ? { audio: payload(f) }
        : f.event === 'start'
          ? { start: String((f.start as { streamId: string }).streamId) }
          : f.event === 'stop'
            ? { stop: true }
            : {},
    audio: (data) => [
      `{"event":"playAudio","media":{"contentType":"audio/x-mulaw","sampleRate":8000,"payload":"${data.toString('base64')}"}}`,
    ],
    clear: (sid) => `{"event":"clearAudio","streamId":"${sid}"}`,
  },
  vonage: {
    format: { encoding: 'linear16', sample_rate: 16000 },
    read: (f) => (f.event === 'websocket:connected' ? { start: '' } : {}),
    audio: (data) => {
      const frames: Buffer[] = [];
      for (let at = 0; at < data.length; at += VONAGE_FRAME_BYTES)
        frames.push(data.subarray(at, at + VONAGE_FRAME_BYTES));
      return frames;
    },
    clear: () => '{"action":"clear"}',
  },
  exotel: {
    format: { encoding: 'linear16', sample_rate: 8000 },
    read: (f) =>
      f.event === 'media'
        ? { audio: payload(f) }
        : f.event === 'start'
          ? { start: String(f.stream_sid) }
          : f.event === 'stop'
            ? { stop: true }
            : {},
    audio: (data, sid) => [
      `{"event":"media","stream_sid":"${sid}","media":{"payload":"${data.toString('base64')}"}}`,
    ],
    clear: (sid) => `{"event":"clear","stream_sid":"${sid}"}`,
  },
};

/** Telnyx calls answered so far: the simulated API's record of each, as the carrier reads it. */
const telnyxCalls = new Set<string>();

function answer(req: IncomingMessage, res: ServerResponse, body: string): void {
  const url = new URL(req.url ?? '/', base);
  const send = (type: string, text: string): void => {
    res.writeHead(200, { 'content-type': type }).end(text);
  };
  switch (`${req.method} ${url.pathname}`) {
    case 'POST /carriers/twilio/voice':
      return send(
        'text/xml',
        `<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="${wsBase}/media/twilio"><Parameter name="token" value="bare"/></Stream></Connect></Response>`,
      );
    case 'POST /carriers/plivo/answer':
      return send(
        'text/xml',
        `<?xml version="1.0" encoding="UTF-8"?><Response><Stream bidirectional="true" keepCallAlive="true" contentType="audio/x-mulaw;rate=8000">${wsBase}/media/plivo</Stream></Response>`,
      );
    case 'GET /carriers/vonage/answer':
      return send(
        'application/json',
        JSON.stringify([
          {
            action: 'connect',
            endpoint: [
              {
                type: 'websocket',
                uri: `${wsBase}/media/vonage`,
                'content-type': 'audio/l16;rate=16000',
                headers: {},
              },
            ],
          },
        ]),
      );
    case 'GET /carriers/exotel/stream':
      return send('application/json', JSON.stringify({ url: `${wsBase}/media/exotel?sample-rate=8000` }));
    // Telnyx: the webhook is acknowledged; the carrier then reads the answer from "its API", here.
    case 'GET /':
      return send('application/json', JSON.stringify({ simulatedCarrierApi: base }));
    case 'POST /carriers/telnyx/events': {
      const event = JSON.parse(body) as {
        data?: { event_type?: string; payload?: { call_control_id?: string } };
      };
      if (event.data?.event_type === 'call.initiated')
        telnyxCalls.add(String(event.data.payload?.call_control_id));
      return send('application/json', '{}');
    }
  }
  const simCall = /^\/sim\/calls\/([^/]+)$/.exec(url.pathname);
  if (req.method === 'GET' && simCall && telnyxCalls.has(decodeURIComponent(simCall[1]!))) {
    const streamUrl = `${wsBase}/media/telnyx`;
    const record = {
      carrier: 'telnyx',
      callSid: decodeURIComponent(simCall[1]!),
      createdAtMs: Date.now(),
      state: 'answered',
      streamUrl,
      spoken: [],
      requests: [
        {
          action: 'answer',
          body: {
            stream_url: streamUrl,
            stream_track: 'inbound_track',
            stream_bidirectional_mode: 'rtp',
            stream_bidirectional_codec: 'PCMU',
          },
        },
      ],
    };
    return send('application/json', JSON.stringify(record));
  }
  res.writeHead(404).end();
}

const server = createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk: string) => {
    body += chunk;
  });
  req.on('end', () => answer(req, res, body));
});

const wss = new WebSocketServer({ server, maxPayload: MAX_PAYLOAD_BYTES });

wss.on('connection', (carrier, req) => {
  const framing = FRAMINGS[new URL(req.url ?? '/', base).pathname.split('/')[2] ?? ''];
  if (framing === undefined) {
    carrier.close(1008);
    return;
  }
  let agent: WebSocket | null = null;
  let queued: Buffer[] = [];
  let sid = '';
  /** Exotel: agent audio held until a chunk it plays without gaps. */
  let held: Buffer[] = [];
  let heldBytes = 0;
  const exotel = framing === FRAMINGS.exotel;

  const toCarrier = (data: Buffer) => {
    if (exotel) {
      held.push(data);
      heldBytes += data.length;
      if (heldBytes < EXOTEL_MIN_CHUNK_BYTES) return;
      data = Buffer.concat(held);
      held = [];
      heldBytes = 0;
    }
    for (const frame of framing.audio(data, sid)) carrier.send(frame);
  };

  const openAgent = () => {
    const ws = new WebSocket(`${agentUrl}/v1/agent/converse`, {
      headers: { authorization: `Token ${apiKey}` },
      perMessageDeflate: false,
    });
    agent = ws;
    ws.on('open', () => {
      ws.send(
        JSON.stringify({
          type: 'Settings',
          audio: { input: framing.format, output: { ...framing.format, container: 'none' } },
          agent: { language: 'en' },
        }),
      );
      for (const audio of queued) ws.send(audio);
      queued = [];
    });
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) {
        toCarrier(data);
      } else if ((JSON.parse(data.toString('utf8')) as { type?: string }).type === 'UserStartedSpeaking') {
        held = [];
        heldBytes = 0;
        carrier.send(framing.clear(sid));
      }
    });
    ws.on('error', () => carrier.close());
    ws.on('close', () => carrier.close());
  };

  const toAgent = (audio: Buffer) => {
    if (agent?.readyState === WebSocket.OPEN) agent.send(audio);
    else queued.push(audio);
  };

  carrier.on('message', (data: Buffer, isBinary: boolean) => {
    if (isBinary) return toAgent(data);
    const frame = framing.read(JSON.parse(data.toString('utf8')) as Record<string, unknown>);
    if (frame.audio) toAgent(frame.audio);
    else if (frame.start !== undefined) {
      sid = frame.start;
      openAgent();
    } else if (frame.stop) {
      agent?.close();
      carrier.close();
    }
  });
  carrier.on('error', () => {});
  carrier.on('close', () => agent?.close());
});

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  base = `http://127.0.0.1:${port}`;
  wsBase = `ws://127.0.0.1:${port}`;
  toParent({ type: 'ready', port });
});

// The relay takes no orders: it only answers the clock and event-loop checks.
onParentMessage(() => {});
