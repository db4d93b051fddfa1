// Plays Vonage against a live server (docs/protocols/vonage.md), independently of the project's
// code: signed webhooks are made with the `jsonwebtoken` package; the media stream is a real `ws`
// client sending `websocket:connected` with the NCCO's headers, then binary 16-bit PCM frames, and
// echoing notifies and clears as Vonage does.
import { createHash, randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import WebSocket from 'ws';
import { watchSocket } from './socket-watch.js';

export const newVonageUuid = () => randomUUID();

export interface VonageSigning {
  secret: string;
  apiKey?: string;
  applicationId?: string;
  /** Seconds added to now for `iat`: negative beyond the tolerance makes an expired (replayed) token. */
  iatOffsetS?: number;
  /** Hash this body instead of the one sent (a body altered in transit). */
  hashOf?: string;
}

/** Vonage's signed-webhook JWT: HS256 with the signature secret, the body's SHA-256 as `payload_hash`. */
export function vonageWebhookJwt(body: string, signing: VonageSigning): string {
  return jwt.sign(
    {
      iss: 'Vonage',
      api_key: signing.apiKey ?? 'abcd1234',
      application_id: signing.applicationId ?? '00000000-0000-4000-8000-000000000000',
      payload_hash: createHash('sha256')
        .update(signing.hashOf ?? body)
        .digest('hex'),
      iat: Math.floor(Date.now() / 1000) + (signing.iatOffsetS ?? 0),
      jti: randomUUID(),
    },
    signing.secret,
    { algorithm: 'HS256' },
  );
}

export interface VonageAnswer {
  status: number;
  body: string;
  contentType: string;
  /** The parsed NCCO when the answer is one. */
  ncco: Array<Record<string, unknown>> | null;
  /** The websocket endpoint of its connect action, when it has one. */
  endpoint: { uri: string; contentType: string; headers: Record<string, string> } | null;
  observer: string | null;
}

export interface VonageCallParams {
  uuid: string;
  from?: string;
  to?: string;
  conversation_uuid?: string;
  [extra: string]: string | undefined;
}

export interface VonageRequestOptions {
  signing?: VonageSigning;
  /** Sent as is instead of a signature made from `signing`. */
  authorization?: string;
  method?: 'GET' | 'POST';
  /** Query string added to the answer URL (our own outbound calls carry `direction` and `context`). */
  query?: Record<string, string>;
}

function withoutUndefined(params: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined));
}

/** The answer webhook as Vonage calls it: GET with query parameters by default, or POST with JSON. */
export async function announceVonageCall(
  baseUrl: string,
  params: VonageCallParams,
  opts: VonageRequestOptions = {},
): Promise<VonageAnswer> {
  const fields = withoutUndefined({
    from: '447700900000',
    to: '447700900001',
    conversation_uuid: `CON-${randomUUID()}`,
    region_url: 'https://api-eu-1.vonage.com',
    ...params,
  });
  const method = opts.method ?? 'GET';
  const body = method === 'POST' ? JSON.stringify(fields) : '';
  const query = new URLSearchParams({ ...(method === 'GET' ? fields : {}), ...opts.query }).toString();
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method === 'POST') headers['content-type'] = 'application/json';
  if (opts.authorization !== undefined) headers.authorization = opts.authorization;
  else if (opts.signing) headers.authorization = `Bearer ${vonageWebhookJwt(body, opts.signing)}`;
  const res = await fetch(`${baseUrl}/carriers/vonage/answer${query ? `?${query}` : ''}`, {
    method,
    headers,
    body: method === 'POST' ? body : undefined,
  });
  const text = await res.text();
  let ncco: Array<Record<string, unknown>> | null = null;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (Array.isArray(parsed)) ncco = parsed as Array<Record<string, unknown>>;
  } catch {
    ncco = null;
  }
  const connect = ncco?.find((a) => a.action === 'connect') as
    { endpoint?: Array<Record<string, unknown>> } | undefined;
  const ws = connect?.endpoint?.find((e) => e.type === 'websocket');
  return {
    status: res.status,
    body: text,
    contentType: res.headers.get('content-type') ?? '',
    ncco,
    endpoint: ws
      ? {
          uri: ws.uri as string,
          contentType: ws['content-type'] as string,
          headers: (ws.headers ?? {}) as Record<string, string>,
        }
      : null,
    observer: res.headers.get('x-callbridge-observer'),
  };
}

/** A status event to the event URL, as Vonage posts them (JSON). */
export async function postVonageEvent(
  baseUrl: string,
  event: Record<string, unknown> | string,
  opts: VonageRequestOptions = {},
): Promise<{ status: number; body: string }> {
  const body = typeof event === 'string' ? event : JSON.stringify(event);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (opts.authorization !== undefined) headers.authorization = opts.authorization;
  else if (opts.signing) headers.authorization = `Bearer ${vonageWebhookJwt(body, opts.signing)}`;
  const res = await fetch(`${baseUrl}/carriers/vonage/events`, { method: 'POST', headers, body });
  return { status: res.status, body: await res.text() };
}

export interface VonageStreamClient {
  ws: WebSocket;
  /** Text messages the server sent, parsed, in order. */
  controls: Array<Record<string, unknown>>;
  /** Binary messages the server sent, in order. */
  audioMessages: Buffer[];
  /** `websocket:connected` with the NCCO's content type and headers (and any extra fields). */
  connected(extra?: Record<string, unknown>): void;
  /** One binary frame of caller audio. */
  sendAudio(frame: Buffer): void;
  dtmf(digit: string): void;
  sendRaw(data: string | Buffer, binary?: boolean): void;
  /** All agent audio received so far. */
  heard(): Buffer;
  waitFor(predicate: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  waitForAudio(bytes: number): Promise<Buffer>;
  /** The caller hangs up: Vonage sends no last frame, it closes. */
  hangUp(): void;
  closed: Promise<{ code: number; reason: string }>;
}

export async function openVonageStream(
  url: string,
  endpoint: { contentType: string; headers: Record<string, string> },
  opts: {
    /** Echo each notify at once, as if its audio had played (default true). */
    echoNotifies?: boolean;
    /** Confirm each clear with `websocket:cleared` (default true). */
    confirmClears?: boolean;
    headers?: Record<string, string>;
  } = {},
): Promise<VonageStreamClient> {
  const echoNotifies = opts.echoNotifies ?? true;
  const confirmClears = opts.confirmClears ?? true;
  const ws = new WebSocket(url, { headers: opts.headers, perMessageDeflate: false });
  const controls: Array<Record<string, unknown>> = [];
  const audioMessages: Buffer[] = [];
  const watch = watchSocket(ws);
  const { closed } = watch;
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (isBinary) {
      audioMessages.push(Buffer.from(data));
    } else {
      const message = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
      controls.push(message);
      if (echoNotifies && message.action === 'notify') {
        ws.send(JSON.stringify({ event: 'websocket:notify', payload: message.payload }));
      }
      if (confirmClears && message.action === 'clear')
        ws.send(JSON.stringify({ event: 'websocket:cleared' }));
    }
    watch.notify();
  });
  await watch.opened;
  const allAudio = () => Buffer.concat(audioMessages);
  const wait = watch.waitUntil;
  return {
    ws,
    controls,
    audioMessages,
    connected: (extra = {}) =>
      ws.send(
        JSON.stringify({
          event: 'websocket:connected',
          'content-type': endpoint.contentType,
          ...endpoint.headers,
          ...extra,
        }),
      ),
    sendAudio: (frame) => ws.send(frame, { binary: true }),
    dtmf: (digit) => ws.send(JSON.stringify({ event: 'websocket:dtmf', digit, duration: 260 })),
    sendRaw: (data, binary = typeof data !== 'string') => ws.send(data, { binary }),
    heard: allAudio,
    waitFor: (predicate) => wait(() => controls.find(predicate)),
    waitForAudio: (bytes) => wait(() => (allAudio().length >= bytes ? allAudio() : undefined)),
    hangUp: () => ws.close(1000),
    closed,
  };
}
