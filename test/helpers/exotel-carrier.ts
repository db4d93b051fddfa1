// Plays Exotel's Voicebot applet against a live server (docs/protocols/exotel.md), independently of
// the project's code: the dynamic URL fetched with the call's query parameters, the `wss://` URL it
// answers dialed with Basic auth from its user and password, and a real `ws` client speaking
// `connected`, `start` (numbers as strings), `media`, `dtmf`, `mark` echoes and `stop`.
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { watchSocket } from './socket-watch.js';

export const newExotelSid = () => randomBytes(16).toString('hex');

export interface ExotelStreamAnswer {
  status: number;
  body: string;
  /** The `url` of the answer, as handed out. */
  url: string | null;
  observer: string | null;
}

/** The Voicebot applet's GET to its dynamic URL, with the call's details as query parameters. */
export async function requestExotelStream(
  baseUrl: string,
  params: Record<string, string>,
): Promise<ExotelStreamAnswer> {
  const query = new URLSearchParams({
    CallFrom: '09876543210',
    CallTo: '08012345678',
    From: '09876543210',
    To: '08012345678',
    Direction: 'incoming',
    CallStatus: 'in-progress',
    ...params,
  });
  const res = await fetch(`${baseUrl}/carriers/exotel/stream?${query}`, {
    headers: { accept: 'application/json' },
  });
  const body = await res.text();
  let url: string | null = null;
  try {
    const parsed = JSON.parse(body) as { url?: unknown };
    if (typeof parsed.url === 'string') url = parsed.url;
  } catch {
    url = null;
  }
  return { status: res.status, body, url, observer: res.headers.get('x-callbridge-observer') };
}

export interface ExotelTarget {
  /** The URL to dial, its user and password removed, its origin swapped for `localBase` when given. */
  url: string;
  headers: Record<string, string>;
  sampleRate: number;
  /** The URL's query parameters other than `sample-rate`, as `start.custom_parameters` returns them. */
  customParameters: Record<string, string>;
}

/** How Exotel dials the answer's URL: its user and password become `Authorization: Basic`. */
export function exotelTarget(answerUrl: string, localBase?: string): ExotelTarget {
  const url = new URL(answerUrl);
  const headers: Record<string, string> = {};
  if (url.username !== '' || url.password !== '') {
    const userinfo = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    headers.authorization = `Basic ${Buffer.from(userinfo).toString('base64')}`;
  }
  let sampleRate = 8000;
  const customParameters: Record<string, string> = {};
  for (const [key, value] of url.searchParams) {
    if (key === 'sample-rate') sampleRate = Number(value);
    else customParameters[key] = value;
  }
  url.username = '';
  url.password = '';
  let dial = url.href;
  if (localBase !== undefined) dial = `${localBase.replace(/^http/, 'ws')}${url.pathname}${url.search}`;
  return { url: dial, headers, sampleRate, customParameters };
}

/** A status callback as Exotel posts it: form-encoded, unsigned. */
export async function postExotelStatus(
  baseUrl: string,
  params: Record<string, string> | string,
  contentType = 'application/x-www-form-urlencoded',
): Promise<{ status: number; body: string }> {
  const res = await fetch(`${baseUrl}/carriers/exotel/status`, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: typeof params === 'string' ? params : new URLSearchParams(params).toString(),
  });
  return { status: res.status, body: await res.text() };
}

export interface ExotelStreamClient {
  ws: WebSocket;
  callSid: string;
  streamSid: string;
  /** Parsed JSON messages the server sent, in order. */
  received: Array<Record<string, unknown>>;
  connected(): void;
  start(opts?: { customParameters?: Record<string, string>; mediaFormat?: Record<string, unknown> }): void;
  /** One `media` message; Exotel sends about 100 ms in each. */
  media(payload: Buffer): void;
  dtmf(digit: string): void;
  mark(name: string): void;
  stop(): void;
  sendRaw(data: string | Buffer, binary?: boolean): void;
  /** Concatenated audio payloads the server sent. */
  heard(): Buffer;
  /** Each media payload the server sent, as sent. */
  chunks(): Buffer[];
  waitFor(predicate: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  waitForAudio(bytes: number): Promise<Buffer>;
  closed: Promise<{ code: number; reason: string }>;
}

export async function openExotelStream(
  target: Pick<ExotelTarget, 'url' | 'headers' | 'sampleRate' | 'customParameters'>,
  opts: {
    callSid: string;
    /** Echo each mark as soon as it arrives, as if its audio played at once (default true). */
    echoMarks?: boolean;
  },
): Promise<ExotelStreamClient> {
  const echoMarks = opts.echoMarks ?? true;
  const ws = new WebSocket(target.url, { headers: target.headers, perMessageDeflate: false });
  const streamSid = newExotelSid();
  let sequence = 0;
  let chunk = 0;
  const received: Array<Record<string, unknown>> = [];
  const watch = watchSocket(ws);
  const { closed } = watch;
  const next = () => String(++sequence);
  ws.on('message', (data: Buffer) => {
    const message = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
    received.push(message);
    if (echoMarks && message.event === 'mark') {
      ws.send(
        JSON.stringify({ event: 'mark', sequence_number: next(), stream_sid: streamSid, mark: message.mark }),
      );
    }
    watch.notify();
  });
  await watch.opened;
  const chunks = () =>
    received
      .filter((m) => m.event === 'media')
      .map((m) => Buffer.from((m.media as { payload: string }).payload, 'base64'));
  const wait = watch.waitUntil;
  const heard = () => Buffer.concat(chunks());
  return {
    ws,
    callSid: opts.callSid,
    streamSid,
    received,
    connected: () => ws.send(JSON.stringify({ event: 'connected' })),
    start: (startOpts = {}) =>
      ws.send(
        JSON.stringify({
          event: 'start',
          sequence_number: next(),
          stream_sid: streamSid,
          start: {
            stream_sid: streamSid,
            call_sid: opts.callSid,
            account_sid: 'acme1',
            from: '09876543210',
            to: '08012345678',
            custom_parameters: startOpts.customParameters ?? target.customParameters,
            media_format: startOpts.mediaFormat ?? {
              encoding: 'audio/x-raw',
              sample_rate: String(target.sampleRate),
              bit_rate: '16',
            },
          },
        }),
      ),
    media: (payload) => {
      chunk += 1;
      ws.send(
        JSON.stringify({
          event: 'media',
          sequence_number: next(),
          stream_sid: streamSid,
          media: {
            chunk: String(chunk),
            timestamp: String((chunk - 1) * 100),
            payload: payload.toString('base64'),
          },
        }),
      );
    },
    dtmf: (digit) =>
      ws.send(
        JSON.stringify({
          event: 'dtmf',
          sequence_number: next(),
          stream_sid: streamSid,
          dtmf: { digit, duration: '200' },
        }),
      ),
    mark: (name) =>
      ws.send(
        JSON.stringify({ event: 'mark', sequence_number: next(), stream_sid: streamSid, mark: { name } }),
      ),
    stop: () =>
      ws.send(
        JSON.stringify({
          event: 'stop',
          sequence_number: next(),
          stream_sid: streamSid,
          stop: { call_sid: opts.callSid, account_sid: 'acme1', reason: 'callended' },
        }),
      ),
    sendRaw: (data, binary = typeof data !== 'string') => ws.send(data, { binary }),
    heard,
    chunks,
    waitFor: (predicate) => wait(() => received.find(predicate)),
    waitForAudio: (bytes) => wait(() => (heard().length >= bytes ? heard() : undefined)),
    closed,
  };
}
