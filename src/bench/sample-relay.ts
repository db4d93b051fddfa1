// The bench's second baseline (its own process): a relay that does per message what the public
// thin relays do (the carrier-to-realtime-model samples that carriers and model vendors publish),
// so that callbridge is measured against what people deploy as well as against the bare floor.
//
// Per message, beyond the bare relay (baseline-relay.ts):
// - every carrier text message is parsed in full into a typed message and dispatched on its event,
//   reading the fields the samples read (the media timestamp, the echoed mark's name);
// - every agent audio message is sent to the carrier as a JSON object built and serialised whole
//   (`JSON.stringify`, not a string template), its payload base64 inside it;
// - every such media message is followed by a mark, and the relay keeps the queue of marks the
//   samples keep (to know what the caller heard): pushed on send, shifted on each echo, emptied on
//   a barge-in;
// - `UserStartedSpeaking` clears the carrier and the mark queue.
// The samples forward the caller's base64 payload inside JSON to their model; the agent here speaks
// docs/protocols/agent.md, whose caller audio is binary, so the payload is decoded into one binary
// message, as the bare relay does (a JSON.stringify of the same payload costs about as much).
// Vonage sends binary audio and has no marks: for it this relay differs from the bare one only in
// how its JSON is built. What it leaves out is what the bare relay leaves out.
import WebSocket from 'ws';
import { exotelChunker, openAgentSocket, startRelay } from './relay-server.js';

const [agentUrl = '', apiKey = ''] = process.argv.slice(2);
const VONAGE_FRAME_BYTES = 640;
const MARK_NAME = 'responsePart';

/** A carrier's text message as the samples type it: the union of the fields they read. */
interface CarrierMessage {
  event?: string;
  streamSid?: string;
  stream_sid?: string;
  start?: { streamSid?: string; streamId?: string; callSid?: string };
  media?: { payload?: string; timestamp?: string | number; track?: string };
  mark?: { name?: string };
  name?: string;
}

/** One carrier's messages, built as objects and serialised whole. */
interface SampleFraming {
  sidOf(message: CarrierMessage): string;
  /** The event the carrier echoes a mark with; null when it has no marks. */
  markEcho: string | null;
  media(payload: string, sid: string): object;
  mark(name: string, sid: string): object | null;
  clear(sid: string): object;
}

const twilioLike = (sidField: 'streamSid' | 'stream_sid' | null): Omit<SampleFraming, 'sidOf'> => {
  const address = (sid: string) => (sidField === null ? {} : { [sidField]: sid });
  return {
    markEcho: 'mark',
    media: (payload, sid) => ({ event: 'media', ...address(sid), media: { payload } }),
    mark: (name, sid) => ({ event: 'mark', ...address(sid), mark: { name } }),
    clear: (sid) => ({ event: 'clear', ...address(sid) }),
  };
};

const FRAMINGS: Record<string, SampleFraming> = {
  twilio: { ...twilioLike('streamSid'), sidOf: (m) => m.start?.streamSid ?? '' },
  telnyx: { ...twilioLike(null), sidOf: () => '' },
  exotel: { ...twilioLike('stream_sid'), sidOf: (m) => m.stream_sid ?? '' },
  plivo: {
    sidOf: (m) => m.start?.streamId ?? '',
    markEcho: 'playedStream',
    media: (payload) => ({
      event: 'playAudio',
      media: { contentType: 'audio/x-mulaw', sampleRate: 8000, payload },
    }),
    mark: (name, sid) => ({ event: 'checkpoint', streamId: sid, name }),
    clear: (sid) => ({ event: 'clearAudio', streamId: sid }),
  },
  vonage: {
    sidOf: () => '',
    markEcho: null,
    media: () => ({}),
    mark: () => null,
    clear: () => ({ action: 'clear' }),
  },
};

startRelay((carrier, carrierName) => {
  const framing = FRAMINGS[carrierName]!;
  const vonage = carrierName === 'vonage';
  const exotel = carrierName === 'exotel';
  let agent: WebSocket | null = null;
  let queued: Buffer[] = [];
  let sid = '';
  let latestMediaTimestamp = 0;
  /** Marks sent and not yet echoed: what of the reply the caller has not heard yet. */
  let markQueue: string[] = [];
  /** Exotel: agent audio held until a chunk it plays without gaps. */
  const chunker = exotelChunker();

  const sendJson = (message: object) => carrier.send(JSON.stringify(message));

  const toCarrier = (data: Buffer) => {
    if (vonage) {
      for (let at = 0; at < data.length; at += VONAGE_FRAME_BYTES)
        carrier.send(data.subarray(at, at + VONAGE_FRAME_BYTES));
      return;
    }
    if (exotel) {
      const chunk = chunker.add(data);
      if (chunk === null) return;
      data = chunk;
    }
    sendJson(framing.media(data.toString('base64'), sid));
    const mark = framing.mark(MARK_NAME, sid);
    if (mark !== null) {
      sendJson(mark);
      markQueue.push(MARK_NAME);
    }
  };

  const onAgentText = (text: string) => {
    const message = JSON.parse(text) as { type?: string };
    if (message.type !== 'UserStartedSpeaking') return;
    chunker.drop();
    markQueue = [];
    sendJson(framing.clear(sid));
  };

  const openAgent = () => {
    const ws = openAgentSocket(agentUrl, apiKey, carrierName, () => {
      for (const audio of queued) ws.send(audio);
      queued = [];
    });
    agent = ws;
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) toCarrier(data);
      else onAgentText(data.toString('utf8'));
    });
    ws.on('error', () => carrier.close());
    ws.on('close', () => carrier.close());
  };

  const toAgent = (audio: Buffer) => {
    if (agent?.readyState === WebSocket.OPEN) agent.send(audio);
    else queued.push(audio);
  };

  const onCarrierText = (message: CarrierMessage) => {
    switch (message.event) {
      case 'media':
        latestMediaTimestamp = Number(message.media?.timestamp ?? latestMediaTimestamp);
        toAgent(Buffer.from(message.media?.payload ?? '', 'base64'));
        return;
      case 'start':
      case 'websocket:connected':
        sid = framing.sidOf(message);
        latestMediaTimestamp = 0;
        openAgent();
        return;
      case 'stop':
        agent?.close();
        carrier.close();
        return;
      default:
        if (message.event === framing.markEcho && markQueue.length > 0) markQueue.shift();
    }
  };

  carrier.on('message', (data: Buffer, isBinary: boolean) => {
    if (isBinary) return toAgent(data);
    onCarrierText(JSON.parse(data.toString('utf8')) as CarrierMessage);
  });
  carrier.on('error', () => {});
  carrier.on('close', () => agent?.close());
});
