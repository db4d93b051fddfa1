// The bench's baseline (its own process): the barest relay that still carries a call from each
// carrier to a voice agent, so that callbridge's figures have a floor measured on the same load.
//
// What "bare" keeps, because audio cannot pass without it: each carrier's answer and the media
// WebSocket (relay-server.ts, shared with the sample relay), JSON.parse of every
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
import WebSocket from 'ws';
import { exotelChunker, openAgentSocket, startRelay } from './relay-server.js';

const [agentUrl = '', apiKey = ''] = process.argv.slice(2);
const VONAGE_FRAME_BYTES = 640;

/** One carrier's media frames, as the relay reads and writes them. */
interface Framing {
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

startRelay((carrier, carrierName) => {
  const framing = FRAMINGS[carrierName]!;
  let agent: WebSocket | null = null;
  let queued: Buffer[] = [];
  let sid = '';
  /** Exotel: agent audio held until a chunk it plays without gaps. */
  const chunker = exotelChunker();
  const exotel = framing === FRAMINGS.exotel;

  const toCarrier = (data: Buffer) => {
    if (exotel) {
      const chunk = chunker.add(data);
      if (chunk === null) return;
      data = chunk;
    }
    for (const frame of framing.audio(data, sid)) carrier.send(frame);
  };

  const openAgent = () => {
    const ws = openAgentSocket(agentUrl, apiKey, carrierName, () => {
      for (const audio of queued) ws.send(audio);
      queued = [];
    });
    agent = ws;
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) {
        toCarrier(data);
      } else if ((JSON.parse(data.toString('utf8')) as { type?: string }).type === 'UserStartedSpeaking') {
        chunker.drop();
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
