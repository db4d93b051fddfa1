// The bench's baseline (its own process): the barest relay that still carries a Twilio call to a
// voice agent, so that callbridge's figures have a floor measured on the same load.
//
// What "bare" keeps, because audio cannot pass without it: the voice webhook (a fixed TwiML answer
// naming the media stream, with a token parameter nobody checks), the media WebSocket, JSON.parse
// of every carrier frame, base64-decoding each media payload into one binary agent message, one
// agent WebSocket per call opened at `start` with the auth header and a `Settings` message, caller
// audio queued until that socket is open, each agent binary message wrapped into one Twilio media
// frame, and `UserStartedSpeaking` turned into `clear` (barge-in is measured).
//
// What it leaves out, all of it callbridge's work: stream tokens and their single-use claim in the
// store, signature checks, waiting for `SettingsApplied`, 20 ms framing, marks and heard-audio
// tracking, speech/silence detection, metrics, logs, call state, records, bounds on every buffer.
import { createServer } from 'node:http';
import WebSocket, { WebSocketServer } from 'ws';
import { onParentMessage, toParent } from './ipc.js';

const [agentUrl = '', apiKey = ''] = process.argv.slice(2);
const MAX_PAYLOAD_BYTES = 64 * 1024;

let mediaUrl = '';

const server = createServer((req, res) => {
  req.resume();
  if (req.method === 'POST' && req.url === '/carriers/twilio/voice') {
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/xml' });
      res.end(
        `<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="${mediaUrl}"><Parameter name="token" value="bare"/></Stream></Connect></Response>`,
      );
    });
    return;
  }
  res.writeHead(404).end();
});

const wss = new WebSocketServer({
  server,
  path: '/media/twilio',
  maxPayload: MAX_PAYLOAD_BYTES,
});

wss.on('connection', (carrier) => {
  let agent: WebSocket | null = null;
  let queued: Buffer[] = [];
  let mediaPrefix = '';
  let clearFrame = '';

  const openAgent = (streamSid: string) => {
    mediaPrefix = `{"event":"media","streamSid":"${streamSid}","media":{"payload":"`;
    clearFrame = `{"event":"clear","streamSid":"${streamSid}"}`;
    const ws = new WebSocket(`${agentUrl}/v1/agent/converse`, {
      headers: { authorization: `Token ${apiKey}` },
      perMessageDeflate: false,
    });
    agent = ws;
    ws.on('open', () => {
      ws.send(
        JSON.stringify({
          type: 'Settings',
          audio: {
            input: { encoding: 'mulaw', sample_rate: 8000 },
            output: { encoding: 'mulaw', sample_rate: 8000, container: 'none' },
          },
          agent: { language: 'en' },
        }),
      );
      for (const audio of queued) ws.send(audio);
      queued = [];
    });
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) {
        carrier.send(`${mediaPrefix}${data.toString('base64')}"}}`);
      } else if ((JSON.parse(data.toString('utf8')) as { type?: string }).type === 'UserStartedSpeaking') {
        carrier.send(clearFrame);
      }
    });
    ws.on('error', () => carrier.close());
    ws.on('close', () => carrier.close());
  };

  carrier.on('message', (data: Buffer) => {
    const frame = JSON.parse(data.toString('utf8'));
    if (frame.event === 'media') {
      const audio = Buffer.from(frame.media.payload, 'base64');
      if (agent?.readyState === WebSocket.OPEN) agent.send(audio);
      else queued.push(audio);
    } else if (frame.event === 'start') {
      openAgent(String(frame.start.streamSid));
    } else if (frame.event === 'stop') {
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
  mediaUrl = `ws://127.0.0.1:${port}/media/twilio`;
  toParent({ type: 'ready', port });
});

// The relay takes no orders: it only answers the clock and event-loop checks.
onParentMessage(() => {});
