// What the bench's relays (baseline-relay.ts, sample-relay.ts) share, all of it outside a call's
// media path: each carrier's answer (a fixed TwiML, Plivo XML, Vonage NCCO or Exotel URL naming the
// media stream; for Telnyx, which answers through its API, the few simulated-API reads the carrier
// makes), the media WebSocket server, Exotel's chunking of agent audio, the agent socket's opening (auth header, a `Settings` in the
// carrier's format) and the process's ready message. What each relay does per message is its own.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import WebSocket, { WebSocketServer } from 'ws';
import { onParentMessage, toParent } from './ipc.js';

export const MAX_PAYLOAD_BYTES = 64 * 1024;

/** The audio format each carrier's media stream carries, as `Settings` declares it. */
export const CARRIER_FORMATS: Record<string, { encoding: 'mulaw' | 'linear16'; sample_rate: number }> = {
  twilio: { encoding: 'mulaw', sample_rate: 8000 },
  telnyx: { encoding: 'mulaw', sample_rate: 8000 },
  plivo: { encoding: 'mulaw', sample_rate: 8000 },
  vonage: { encoding: 'linear16', sample_rate: 16000 },
  exotel: { encoding: 'linear16', sample_rate: 8000 },
};

let base = '';
let wsBase = '';

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

function readBody(req: IncomingMessage, res: ServerResponse): void {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk: string) => {
    body += chunk;
  });
  req.on('end', () => answer(req, res, body));
}

/**
 * Serves the carriers' answers and media sockets on a loopback port, hands each media socket to
 * `onStream` with the carrier its path names, and tells the orchestrator the port.
 */
export function startRelay(onStream: (carrier: WebSocket, carrierName: string) => void): void {
  const server = createServer(readBody);
  const wss = new WebSocketServer({ server, maxPayload: MAX_PAYLOAD_BYTES });
  wss.on('connection', (carrier, req) => {
    const name = new URL(req.url ?? '/', base).pathname.split('/')[2] ?? '';
    if (!Object.hasOwn(CARRIER_FORMATS, name)) {
      carrier.close(1008);
      return;
    }
    onStream(carrier, name);
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    base = `http://127.0.0.1:${port}`;
    wsBase = `ws://127.0.0.1:${port}`;
    toParent({ type: 'ready', port });
  });
  // A relay takes no orders: it only answers the clock and event-loop checks.
  onParentMessage(() => {});
}

/** The call's agent socket: opened with the auth header; `Settings` in the carrier's format once open. */
export function openAgentSocket(
  agentUrl: string,
  apiKey: string,
  carrierName: string,
  onOpen: (agent: WebSocket) => void,
): WebSocket {
  const ws = new WebSocket(`${agentUrl}/v1/agent/converse`, {
    headers: { authorization: `Token ${apiKey}` },
    perMessageDeflate: false,
  });
  const format = CARRIER_FORMATS[carrierName]!;
  ws.on('open', () => {
    ws.send(
      JSON.stringify({
        type: 'Settings',
        audio: { input: format, output: { ...format, container: 'none' } },
        agent: { language: 'en' },
      }),
    );
    onOpen(ws);
  });
  return ws;
}

/** Exotel plays agent audio without gaps only in chunks of at least this many bytes. */
const EXOTEL_MIN_CHUNK_BYTES = 3_200;

/** Agent audio held for Exotel until a whole chunk: `add` returns one once it is, `drop` on a barge-in. */
export function exotelChunker(): { add(data: Buffer): Buffer | null; drop(): void } {
  let held: Buffer[] = [];
  let heldBytes = 0;
  return {
    add(data) {
      held.push(data);
      heldBytes += data.length;
      if (heldBytes < EXOTEL_MIN_CHUNK_BYTES) return null;
      const chunk = Buffer.concat(held);
      held = [];
      heldBytes = 0;
      return chunk;
    },
    drop() {
      held = [];
      heldBytes = 0;
    },
  };
}
