// Plays Plivo against a live server: form-encoded webhooks signed with X-Plivo-Signature-V3 (made
// here with node:crypto, independently of the project's code, as Plivo's SDK describes it), and the
// Audio Stream Plivo opens on the <Stream> URL of the answer, with a real `ws` client
// (docs/protocols/plivo.md).
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { watchSocket } from './socket-watch.js';

export type FormParams = Record<string, string>;

/**
 * Plivo's V3 signature: the URL without its query, `?` and the query sorted as `k=v&…` (values
 * decoded), `.` when both a query and POST parameters exist, the POST parameters sorted as
 * key+value, then `.` and the nonce; HMAC-SHA256 with the auth token, base64.
 */
export function plivoV3Signature(authToken: string, url: string, params: FormParams, nonce: string): string {
  const [base = '', search = ''] = url.split('?', 2);
  const query = [...new URLSearchParams(search)]
    .sort(([a, av], [b, bv]) => (a === b ? (av < bv ? -1 : 1) : a < b ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const keys = Object.keys(params).sort();
  let data = base;
  if (query !== '' || keys.length > 0) data += `?${query}`;
  if (query !== '' && keys.length > 0) data += '.';
  for (const key of keys) data += `${key}${params[key]}`;
  return createHmac('sha256', authToken).update(`${data}.${nonce}`).digest('base64');
}

export const newCallUuid = () => randomUUID();
export const newNonce = () => randomBytes(10).toString('hex');

export type PlivoSigning =
  | { kind: 'none' }
  /** Signed over `publicUrl` + path (and query); `extraSignatures` go first in the header (rotation). */
  | { kind: 'valid'; authToken: string; publicUrl: string; nonce?: string; extraSignatures?: string[] }
  /** Signed with a token that is not the account's. */
  | { kind: 'forged'; publicUrl: string };

export function plivoHeaders(
  path: string,
  params: FormParams,
  signing: PlivoSigning,
): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    'user-agent': 'PlivoHTTP',
  };
  if (signing.kind === 'none') return headers;
  const nonce = signing.kind === 'valid' ? (signing.nonce ?? newNonce()) : newNonce();
  const token = signing.kind === 'valid' ? signing.authToken : 'not-the-account-token';
  const signature = plivoV3Signature(token, `${signing.publicUrl}${path}`, params, nonce);
  const extra = signing.kind === 'valid' ? (signing.extraSignatures ?? []) : [];
  headers['x-plivo-signature-v3'] = [...extra, signature].join(',');
  headers['x-plivo-signature-v3-nonce'] = nonce;
  return headers;
}

export function answerParams(overrides: FormParams = {}): FormParams {
  const callUuid = overrides.CallUUID ?? newCallUuid();
  return {
    CallUUID: callUuid,
    RequestUUID: callUuid,
    From: '15005550006',
    To: '15005550001',
    Direction: 'inbound',
    CallStatus: 'in-progress',
    Event: 'StartApp',
    BillRate: '0.00850',
    ...overrides,
  };
}

export interface PlivoAnswer {
  status: number;
  body: string;
  contentType: string;
  /** The <Stream> element's text: the media URL. */
  streamUrl: string;
  streamAttributes: Record<string, string>;
  observer: string | null;
}

function decodeXml(text: string): string {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** Posts a form to one of Plivo's routes, signed as Plivo signs it. */
export async function postPlivo(
  baseUrl: string,
  path: string,
  params: FormParams,
  signing: PlivoSigning = { kind: 'none' },
  extraHeaders: Record<string, string> = {},
): Promise<PlivoAnswer> {
  const res = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { ...plivoHeaders(path, params, signing), ...extraHeaders },
    body: new URLSearchParams(params).toString(),
  });
  const body = await res.text();
  const stream = /<Stream\b([^>]*)>([^<]*)<\/Stream>/.exec(body);
  const streamAttributes: Record<string, string> = {};
  for (const m of (stream?.[1] ?? '').matchAll(/([A-Za-z]+)="([^"]*)"/g))
    streamAttributes[m[1]!] = decodeXml(m[2]!);
  return {
    status: res.status,
    body,
    contentType: res.headers.get('content-type') ?? '',
    streamUrl: decodeXml(stream?.[2] ?? ''),
    streamAttributes,
    observer: res.headers.get('x-callbridge-observer'),
  };
}

export interface PlivoStreamClient {
  ws: WebSocket;
  callUuid: string;
  streamId: string;
  received: Array<Record<string, unknown>>;
  start(opts?: { mediaFormat?: Record<string, unknown>; extraHeaders?: string }): void;
  media(payload: Buffer): void;
  dtmf(digit: string): void;
  playedStream(name: string): void;
  clearedAudio(): void;
  stop(): void;
  sendRaw(data: string | Buffer): void;
  /** Concatenated `playAudio` payloads the server sent. */
  audio(): Buffer;
  waitFor(predicate: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  waitForAudio(bytes: number): Promise<Buffer>;
  closed: Promise<{ code: number; reason: string }>;
}

/** Opens the Audio Stream Plivo opens on the <Stream> URL. */
export async function openPlivoStream(
  streamUrl: string,
  opts: {
    callUuid: string;
    headers?: Record<string, string>;
    /** Echo each checkpoint as `playedStream` at once, as if its audio played (default true). */
    echoCheckpoints?: boolean;
    /** Answer each `clearAudio` with `clearedAudio` (default true). */
    confirmClears?: boolean;
  },
): Promise<PlivoStreamClient> {
  const echo = opts.echoCheckpoints ?? true;
  const confirm = opts.confirmClears ?? true;
  const ws = new WebSocket(streamUrl, { headers: opts.headers });
  const streamId = randomUUID();
  let sequence = 0;
  let chunk = 0;
  const received: Array<Record<string, unknown>> = [];
  const watch = watchSocket(ws);
  const { closed } = watch;
  const send = (message: Record<string, unknown>) =>
    ws.send(JSON.stringify({ event: message.event, sequenceNumber: ++sequence, streamId, ...message }));
  ws.on('message', (data: Buffer) => {
    const message = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
    received.push(message);
    if (echo && message.event === 'checkpoint') send({ event: 'playedStream', name: message.name });
    if (confirm && message.event === 'clearAudio') send({ event: 'clearedAudio' });
    watch.notify();
  });
  await watch.opened;
  const audio = () =>
    Buffer.concat(
      received
        .filter((m) => m.event === 'playAudio')
        .map((m) => Buffer.from((m.media as { payload: string }).payload, 'base64')),
    );
  const waitUntil = watch.waitUntil;
  return {
    ws,
    callUuid: opts.callUuid,
    streamId,
    received,
    start: (start = {}) =>
      send({
        event: 'start',
        start: {
          callId: opts.callUuid,
          streamId,
          accountId: 'MAXXXXXXXXXXXXXXXXXX',
          tracks: ['inbound'],
          mediaFormat: start.mediaFormat ?? { encoding: 'audio/x-mulaw', sampleRate: 8000 },
        },
        extra_headers: start.extraHeaders ?? '',
      }),
    media: (payload) => {
      chunk += 1;
      send({
        event: 'media',
        media: {
          track: 'inbound',
          timestamp: String(chunk * 20),
          chunk,
          payload: payload.toString('base64'),
        },
      });
    },
    dtmf: (digit) => send({ event: 'dtmf', dtmf: { track: 'inbound', digit } }),
    playedStream: (name) => send({ event: 'playedStream', name }),
    clearedAudio: () => send({ event: 'clearedAudio' }),
    stop: () => send({ event: 'stop' }),
    sendRaw: (data) => ws.send(data),
    audio,
    waitFor: (predicate) => waitUntil(() => received.find(predicate)),
    waitForAudio: (bytes) =>
      waitUntil(() => {
        const all = audio();
        return all.length >= bytes ? all : undefined;
      }),
    closed,
  };
}
