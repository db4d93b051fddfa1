// Plays Telnyx against a live server: Call Control webhooks signed with Ed25519 (made here with
// node:crypto, independently of the project's code), and the media stream Telnyx opens on the
// `stream_url` of the answer, with a real `ws` client (docs/protocols/telnyx.md).
import { generateKeyPairSync, type KeyObject, randomBytes, randomUUID, sign } from 'node:crypto';
import WebSocket from 'ws';
import { watchSocket } from './socket-watch.js';

export interface TelnyxAccount {
  privateKey: KeyObject;
  /** Base64 of the raw 32-byte public key: what TELNYX_PUBLIC_KEY holds. */
  publicKey: string;
  /** Base64 of the raw 32-byte private seed: what the simulated carrier signs with. */
  privateSeed: string;
}

export function telnyxAccount(): TelnyxAccount {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const pub = publicKey.export({ format: 'jwk' });
  const priv = privateKey.export({ format: 'jwk' });
  return {
    privateKey,
    publicKey: Buffer.from(pub.x!, 'base64url').toString('base64'),
    privateSeed: Buffer.from(priv.d!, 'base64url').toString('base64'),
  };
}

export const newCallControlId = () => `v3:${randomBytes(24).toString('base64url')}`;

export interface CallSpec {
  callControlId?: string;
  from?: string;
  to?: string;
  direction?: 'incoming' | 'outgoing';
  clientState?: string | null;
}

/** A Call Control webhook body, shaped as Telnyx sends it. */
export function telnyxEvent(eventType: string, payload: Record<string, unknown>): Record<string, unknown> {
  return {
    data: {
      record_type: 'event',
      event_type: eventType,
      id: randomUUID(),
      occurred_at: new Date().toISOString(),
      payload,
    },
    meta: { attempt: 1, delivered_to: 'https://bridge.example.com/carriers/telnyx/events' },
  };
}

export function callPayload(spec: CallSpec = {}): Record<string, unknown> {
  return {
    call_control_id: spec.callControlId ?? newCallControlId(),
    call_leg_id: randomUUID(),
    call_session_id: randomUUID(),
    connection_id: '1293384261075731499',
    from: spec.from ?? '+15005550006',
    to: spec.to ?? '+15005550001',
    direction: spec.direction ?? 'incoming',
    state: 'parked',
    client_state: spec.clientState ?? null,
    start_time: new Date().toISOString(),
  };
}

export type Signing =
  | { kind: 'none' }
  | { kind: 'valid'; account: TelnyxAccount; timestampS?: number }
  /** Signed with a key that is not the account's. */
  | { kind: 'forged' }
  /** Signed correctly, but 301 s ago. */
  | { kind: 'expired'; account: TelnyxAccount };

export function signTelnyx(privateKey: KeyObject, timestamp: string, body: string): string {
  return sign(null, Buffer.from(`${timestamp}|${body}`), privateKey).toString('base64');
}

export function telnyxHeaders(body: string, signing: Signing): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'telnyx-webhooks',
  };
  const nowS = Math.floor(Date.now() / 1000);
  let key: KeyObject | undefined;
  let timestamp = nowS;
  switch (signing.kind) {
    case 'none':
      return headers;
    case 'valid':
      key = signing.account.privateKey;
      timestamp = signing.timestampS ?? nowS;
      break;
    case 'forged':
      key = generateKeyPairSync('ed25519').privateKey;
      break;
    case 'expired':
      key = signing.account.privateKey;
      timestamp = nowS - 301;
      break;
  }
  headers['telnyx-timestamp'] = String(timestamp);
  headers['telnyx-signature-ed25519'] = signTelnyx(key, String(timestamp), body);
  return headers;
}

export interface PostAnswer {
  status: number;
  body: string;
}

/** Posts a webhook exactly as Telnyx does; `raw` replaces the JSON body (for malformed ones). */
export async function postTelnyxEvent(
  baseUrl: string,
  event: Record<string, unknown> | { raw: string },
  signing: Signing = { kind: 'none' },
  extraHeaders: Record<string, string> = {},
): Promise<PostAnswer> {
  const body = 'raw' in event && typeof event.raw === 'string' ? event.raw : JSON.stringify(event);
  const res = await fetch(`${baseUrl}/carriers/telnyx/events`, {
    method: 'POST',
    headers: { ...telnyxHeaders(body, signing), ...extraHeaders },
    body,
  });
  return { status: res.status, body: await res.text() };
}

export interface AnnouncedCall {
  /** The webhook's answer: 200 when taken. */
  status: number;
  body: string;
  callControlId: string;
  /** The answer's `stream_url`; '' when no answer with one came in time. */
  streamUrl: string;
  /** The answer's `client_state`, which Telnyx returns in the stream's `start`. */
  clientState: string | null;
  /** The whole answer request body, for checks on its stream fields. */
  answer: Record<string, unknown> | undefined;
}

/** Finds the server's answer request for a call in whatever stands in for Telnyx's API. */
export type AnswerLookup = (callControlId: string) => Promise<Record<string, unknown> | undefined>;

/** The answer as the simulated carrier API at `apiUrl` recorded it. */
export function answerFromSimulatedApi(apiUrl: string, waitMs = 3000): AnswerLookup {
  return async (callControlId) => {
    const res = await fetch(
      `${apiUrl}/sim/calls/${encodeURIComponent(callControlId)}?wait=answer&timeoutMs=${waitMs}`,
    );
    if (!res.ok) return undefined;
    const record = (await res.json()) as {
      requests: Array<{ action: string; body: Record<string, unknown> }>;
    };
    return record.requests.find((r) => r.action === 'answer')?.body;
  };
}

/** The answer among requests a fake API recorded (`path`, JSON `body`), waiting up to `waitMs`. */
export function answerFromRecordedRequests(
  requests: ReadonlyArray<{ path: string; body: string }>,
  waitMs = 3000,
): AnswerLookup {
  return async (callControlId) => {
    const path = `/v2/calls/${encodeURIComponent(callControlId)}/actions/answer`;
    const deadline = Date.now() + waitMs;
    for (;;) {
      const found = requests.find((r) => r.path === path);
      if (found) return JSON.parse(found.body) as Record<string, unknown>;
      if (Date.now() >= deadline) return undefined;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
}

/**
 * Announces an inbound call as Telnyx does: `call.initiated` to the server, then the server's answer
 * request to Telnyx's API, where the stream URL is (Telnyx answers through its API).
 */
export async function announceTelnyxCall(
  baseUrl: string,
  answerOf: AnswerLookup,
  signing: Signing,
  spec: CallSpec = {},
): Promise<AnnouncedCall> {
  const payload = callPayload(spec);
  const callControlId = String(payload.call_control_id);
  const posted = await postTelnyxEvent(baseUrl, telnyxEvent('call.initiated', payload), signing);
  const none = { ...posted, callControlId, streamUrl: '', clientState: null, answer: undefined };
  if (posted.status !== 200) return none;
  const answer = await answerOf(callControlId);
  if (answer === undefined) return none;
  const streamUrl = typeof answer.stream_url === 'string' ? answer.stream_url : '';
  const clientState = typeof answer.client_state === 'string' ? answer.client_state : null;
  return { ...posted, callControlId, streamUrl, clientState, answer };
}

export interface TelnyxStreamClient {
  ws: WebSocket;
  callControlId: string;
  streamId: string;
  /** Parsed JSON messages the server sent, in order. */
  received: Array<Record<string, unknown>>;
  start(opts?: {
    clientState?: string | null;
    customParameters?: Record<string, string>;
    mediaFormat?: Record<string, unknown>;
  }): void;
  media(payload: Buffer, opts?: { sequence?: number }): void;
  /** The sequence number the next frame will carry. */
  nextSequence(): number;
  dtmf(digit: string): void;
  mark(name: string): void;
  error(code: number, title: string): void;
  stop(): void;
  sendRaw(data: string | Buffer): void;
  /** Concatenated audio payloads the server sent. */
  audio(): Buffer;
  waitFor(predicate: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  waitForAudio(bytes: number): Promise<Buffer>;
  closed: Promise<{ code: number; reason: string }>;
}

/** Opens the media stream Telnyx opens on the answer's `stream_url` and sends `connected`. */
export async function openTelnyxStream(
  streamUrl: string,
  opts: {
    callControlId: string;
    headers?: Record<string, string>;
    /** Echo each mark as soon as it arrives, as if its audio played at once (default true). */
    echoMarks?: boolean;
  },
): Promise<TelnyxStreamClient> {
  const echoMarks = opts.echoMarks ?? true;
  const ws = new WebSocket(streamUrl, { headers: opts.headers });
  const streamId = randomUUID().toUpperCase();
  let sequence = 0;
  let chunk = 0;
  const received: Array<Record<string, unknown>> = [];
  const watch = watchSocket(ws);
  const { closed } = watch;
  const send = (message: Record<string, unknown>) => ws.send(JSON.stringify(message));
  const sequenced = (message: Record<string, unknown>) =>
    send({ event: message.event, sequence_number: String(++sequence), ...message, stream_id: streamId });
  ws.on('message', (data: Buffer) => {
    const message = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
    received.push(message);
    if (echoMarks && message.event === 'mark') sequenced({ event: 'mark', mark: message.mark });
    watch.notify();
  });
  await watch.opened;
  send({ event: 'connected', version: '1.0.0' });
  const audio = () =>
    Buffer.concat(
      received
        .filter((m) => m.event === 'media')
        .map((m) => Buffer.from((m.media as { payload: string }).payload, 'base64')),
    );
  const waitUntil = watch.waitUntil;
  return {
    ws,
    callControlId: opts.callControlId,
    streamId,
    received,
    start: (start = {}) =>
      sequenced({
        event: 'start',
        start: {
          user_id: randomUUID(),
          call_control_id: opts.callControlId,
          call_session_id: randomUUID(),
          from: '+15005550006',
          to: '+15005550001',
          tags: [],
          client_state: start.clientState ?? null,
          custom_parameters: start.customParameters ?? {},
          media_format: start.mediaFormat ?? { encoding: 'PCMU', sample_rate: 8000, channels: 1 },
        },
      }),
    media: (payload, media = {}) => {
      chunk += 1;
      const seq = media.sequence ?? ++sequence;
      send({
        event: 'media',
        sequence_number: String(seq),
        media: {
          track: 'inbound',
          chunk: String(chunk),
          timestamp: String((chunk - 1) * 20),
          payload: payload.toString('base64'),
        },
        stream_id: streamId,
      });
    },
    nextSequence: () => sequence + 1,
    dtmf: (digit) => sequenced({ event: 'dtmf', dtmf: { digit } }),
    mark: (name) => sequenced({ event: 'mark', mark: { name } }),
    error: (code, title) => sequenced({ event: 'error', payload: { code, title } }),
    stop: () =>
      sequenced({ event: 'stop', stop: { user_id: randomUUID(), call_control_id: opts.callControlId } }),
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
