// Plays Twilio against a live server: the voice webhook, then the media stream it names, with a
// real `ws` client (docs/protocols/twilio.md).
import { randomBytes } from 'node:crypto';
import twilio from 'twilio';
import WebSocket from 'ws';
import type { AgentConnection, FakeAgent } from './fake-agent.js';
import { watchSocket } from './socket-watch.js';

export interface Answer {
  status: number;
  body: string;
  streamUrl: string;
  parameters: Record<string, string>;
  observer: string | null;
}

/** The stream URL of an answer, reached at this test's server instead of the public host it names. */
export function localStreamUrl(baseUrl: string, streamUrl: string): string {
  const { pathname } = new URL(streamUrl);
  return `${baseUrl.replace(/^http/, 'ws')}${pathname}`;
}

export const newCallSid = () => `CA${randomBytes(16).toString('hex')}`;
export const newStreamSid = () => `MZ${randomBytes(16).toString('hex')}`;

export async function voiceWebhook(
  baseUrl: string,
  params: Record<string, string>,
  opts: { authToken?: string; publicUrl?: string; signature?: string } = {},
): Promise<Answer> {
  const path = '/carriers/twilio/voice';
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (opts.signature !== undefined) headers['x-twilio-signature'] = opts.signature;
  else if (opts.authToken) {
    headers['x-twilio-signature'] = twilio.getExpectedTwilioSignature(
      opts.authToken,
      `${opts.publicUrl ?? baseUrl}${path}`,
      params,
    );
  }
  const res = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers,
    body: new URLSearchParams(params).toString(),
  });
  const body = await res.text();
  const streamUrl = /<Stream url="([^"]+)"/.exec(body)?.[1] ?? '';
  const parameters: Record<string, string> = {};
  for (const m of body.matchAll(/<Parameter name="([^"]+)" value="([^"]*)"\s*\/>/g)) {
    parameters[m[1]!] = m[2]!
      .replace(/&quot;/g, '"')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');
  }
  return {
    status: res.status,
    body,
    streamUrl,
    parameters,
    observer: res.headers.get('x-callbridge-observer'),
  };
}

export interface CarrierStreamClient {
  ws: WebSocket;
  callSid: string;
  streamSid: string;
  /** Parsed JSON messages the server sent, in order. */
  received: Array<Record<string, unknown>>;
  start(customParameters: Record<string, string>, extra?: { mediaFormat?: Record<string, unknown> }): void;
  media(payload: Buffer): void;
  mark(name: string): void;
  dtmf(digit: string): void;
  stop(): void;
  sendRaw(data: string | Buffer): void;
  /** Concatenated audio payloads the server sent. */
  audio(): Buffer;
  waitFor(predicate: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  waitForAudio(bytes: number): Promise<Buffer>;
  closed: Promise<{ code: number; reason: string }>;
}

export async function openMediaStream(
  streamUrl: string,
  opts: {
    callSid: string;
    headers?: Record<string, string>;
    /** Echo each mark as soon as it arrives, as if its audio played at once (default true). */
    echoMarks?: boolean;
    /** Sign the upgrade as Twilio does, over `streamUrl` as dialed (the server's auth token). */
    authToken?: string;
  },
): Promise<CarrierStreamClient> {
  const echoMarks = opts.echoMarks ?? true;
  const headers = { ...opts.headers };
  if (opts.authToken !== undefined) {
    headers['x-twilio-signature'] = twilio.getExpectedTwilioSignature(opts.authToken, streamUrl, {});
  }
  const ws = new WebSocket(streamUrl, { headers });
  const streamSid = newStreamSid();
  let seq = 0;
  const received: Array<Record<string, unknown>> = [];
  const watch = watchSocket(ws);
  const { closed } = watch;
  ws.on('message', (data: Buffer) => {
    const message = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
    received.push(message);
    if (echoMarks && message.event === 'mark') {
      ws.send(
        JSON.stringify({ event: 'mark', streamSid, sequenceNumber: String(++seq), mark: message.mark }),
      );
    }
    watch.notify();
  });
  await watch.opened;
  let chunk = 0;
  const send = (m: Record<string, unknown>) =>
    ws.send(JSON.stringify({ ...m, sequenceNumber: String(++seq) }));
  const audio = () =>
    Buffer.concat(
      received
        .filter((m) => m.event === 'media')
        .map((m) => Buffer.from((m.media as { payload: string }).payload, 'base64')),
    );
  ws.send(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }));
  return {
    ws,
    callSid: opts.callSid,
    streamSid,
    received,
    start: (customParameters, extra = {}) =>
      send({
        event: 'start',
        streamSid,
        start: {
          accountSid: `AC${'0'.repeat(32)}`,
          streamSid,
          callSid: opts.callSid,
          tracks: ['inbound'],
          mediaFormat: extra.mediaFormat ?? { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
          customParameters,
        },
      }),
    media: (payload) => {
      chunk++;
      send({
        event: 'media',
        streamSid,
        media: {
          track: 'inbound',
          chunk: String(chunk),
          timestamp: String(chunk * 20),
          payload: payload.toString('base64'),
        },
      });
    },
    mark: (name) => send({ event: 'mark', streamSid, mark: { name } }),
    dtmf: (digit) => send({ event: 'dtmf', streamSid, dtmf: { track: 'inbound_track', digit } }),
    stop: () =>
      send({ event: 'stop', streamSid, stop: { accountSid: `AC${'0'.repeat(32)}`, callSid: opts.callSid } }),
    sendRaw: (data) => ws.send(data),
    audio,
    waitFor: (predicate) => watch.waitUntil(() => received.find(predicate)),
    waitForAudio: (bytes) =>
      watch.waitUntil(() => {
        const all = audio();
        return all.length >= bytes ? all : undefined;
      }),
    closed,
  };
}

/**
 * An inbound call answered end to end: the voice webhook, its media stream started, and the agent
 * that dialed for it past `Settings` and ready.
 */
export async function answeredCall(
  baseUrl: string,
  agent: FakeAgent,
): Promise<{ callSid: string; carrier: CarrierStreamClient; conn: AgentConnection }> {
  const callSid = newCallSid();
  const answer = await voiceWebhook(baseUrl, { CallSid: callSid, From: '+15005550006', To: '+15005550001' });
  const carrier = await openMediaStream(answer.streamUrl, { callSid });
  carrier.start(answer.parameters);
  const conn = await agent.nextConnection();
  await conn.waitFor('Settings');
  conn.send({ type: 'SettingsApplied' });
  return { callSid, carrier, conn };
}
