// The simulated carrier playing Vonage (docs/protocols/vonage.md): the answer webhook (GET, signed
// with the signature secret when VONAGE_SIGNATURE_SECRET is in the environment), the NCCO it reads,
// then the WebSocket the NCCO names: `websocket:connected` carrying the NCCO's headers, caller audio
// as binary 16-bit PCM frames, notify echoes once the audio before them has played, `websocket:cleared`
// after a clear, no stop frame, and a `completed` event after the hang-up.
import { createHash, randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import type { MediaFormat } from '../../../audio/format.js';
import type { WireFrame } from '../../../call/carrier-port.js';
import type { SimAnswer, SimCallSpec, SimDialect, SimServerEvent, SimStream } from '../dialect.js';
import { carrierFetch, serverError } from './fetch-answer.js';

const FRAME_MS = 20;
/** Vonage queues at most this many messages toward the caller; beyond it audio is lost. */
const BUFFER_MESSAGES = 3072;
const VONAGE_RATES = new Set([8000, 16000, 24000]);

type Env = Record<string, string | undefined>;

function signatureSecret(env: Env): string | undefined {
  return env.VONAGE_SIGNATURE_SECRET?.split(',')[0]?.trim() || undefined;
}

/** Vonage's signed-webhook JWT: HS256 over the claims, the body's hash among them. */
export async function signVonageWebhook(env: Env, body: string): Promise<string | undefined> {
  const secret = signatureSecret(env);
  if (secret === undefined) return undefined;
  return new SignJWT({
    api_key: env.VONAGE_API_KEY ?? 'a1b2c3d4',
    application_id: env.VONAGE_APPLICATION_ID ?? '00000000-0000-4000-8000-000000000000',
    payload_hash: createHash('sha256').update(body).digest('hex'),
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer('Vonage')
    .setIssuedAt()
    .setJti(randomUUID())
    .sign(new TextEncoder().encode(secret));
}

/** Phone numbers as Vonage writes them: E.164 digits without the plus. */
function vonageNumber(e164: string): string {
  return e164.replace(/^\+/, '');
}

interface WebsocketEndpoint {
  uri: string;
  contentType: string;
  format: MediaFormat;
  headers: Record<string, string>;
}

type NccoReading =
  | { kind: 'stream'; endpoint: WebsocketEndpoint }
  | { kind: 'declined'; say: string }
  | { kind: 'bad'; error: string };

/** The first action decides: `connect` to a websocket streams, `talk` alone declines. */
export function readNcco(body: string): NccoReading {
  let ncco: unknown;
  try {
    ncco = JSON.parse(body);
  } catch {
    return { kind: 'bad', error: 'the answer is not JSON (Vonage expects an NCCO array)' };
  }
  if (!Array.isArray(ncco) || ncco.length === 0)
    return { kind: 'bad', error: 'the NCCO is not a non-empty array' };
  const connect = ncco.find((action) => (action as { action?: unknown })?.action === 'connect') as
    { endpoint?: unknown } | undefined;
  if (connect === undefined) {
    const talk = ncco.find((action) => (action as { action?: unknown })?.action === 'talk') as
      { text?: unknown } | undefined;
    if (talk !== undefined) return { kind: 'declined', say: typeof talk.text === 'string' ? talk.text : '' };
    const stream = ncco.find((action) => (action as { action?: unknown })?.action === 'stream') as
      { streamUrl?: unknown } | undefined;
    if (stream !== undefined) {
      const url = Array.isArray(stream.streamUrl) ? String(stream.streamUrl[0] ?? '') : '';
      return { kind: 'declined', say: `(the recording at ${url})` };
    }
    return { kind: 'bad', error: 'the NCCO has no connect action' };
  }
  const endpoint = Array.isArray(connect.endpoint)
    ? (connect.endpoint[0] as Record<string, unknown> | undefined)
    : undefined;
  if (endpoint?.type !== 'websocket')
    return { kind: 'bad', error: 'the connect action has no websocket endpoint' };
  const uri = endpoint.uri;
  if (typeof uri !== 'string' || !/^wss?:\/\//.test(uri))
    return { kind: 'bad', error: 'the websocket uri is not a ws(s):// URL' };
  const contentType = endpoint['content-type'];
  const rate = typeof contentType === 'string' ? /^audio\/l16;rate=(\d+)$/.exec(contentType)?.[1] : undefined;
  if (rate === undefined || !VONAGE_RATES.has(Number(rate))) {
    return { kind: 'bad', error: 'content-type must be audio/l16;rate=8000, 16000 or 24000' };
  }
  const headers: Record<string, string> = {};
  const rawHeaders = endpoint.headers;
  if (rawHeaders !== undefined) {
    if (typeof rawHeaders !== 'object' || rawHeaders === null)
      return { kind: 'bad', error: 'headers must be an object' };
    for (const [key, value] of Object.entries(rawHeaders)) {
      if (typeof value === 'string') headers[key] = value;
    }
  }
  return {
    kind: 'stream',
    endpoint: {
      uri,
      contentType: contentType as string,
      format: { encoding: 'linear16', sampleRate: Number(rate), channels: 1 },
      headers,
    },
  };
}

interface VonageCall {
  uuid: string;
  conversationUuid: string;
  from: string;
  to: string;
}

class VonageSimStream implements SimStream {
  readonly url: string;
  readonly headers: Record<string, string> = {};
  readonly format: MediaFormat;
  readonly callSid: string;
  readonly streamSid: string;
  private readonly frameBytes: number;
  private readonly notifies = new Map<string, unknown>();
  private notifyCount = 0;
  /** When the audio Vonage holds will have played: its buffer's depth, on the wall clock. */
  private queueEndsAtMs = 0;
  private readonly warned = new Set<string>();

  constructor(
    private readonly endpoint: WebsocketEndpoint,
    private readonly call: VonageCall,
    private readonly spec: SimCallSpec,
    private readonly nowMs: () => number = () => performance.now(),
  ) {
    this.url = endpoint.uri;
    this.format = endpoint.format;
    this.callSid = call.uuid;
    this.streamSid = call.uuid;
    this.frameBytes = (endpoint.format.sampleRate * 2 * FRAME_MS) / 1000;
  }

  opening(): WireFrame[] {
    return [
      JSON.stringify({
        event: 'websocket:connected',
        'content-type': this.endpoint.contentType,
        ...this.endpoint.headers,
      }),
    ];
  }

  callerAudio(payload: Buffer): WireFrame[] {
    return [payload];
  }

  dtmf(digit: string): WireFrame {
    return JSON.stringify({ event: 'websocket:dtmf', digit, duration: 260 });
  }

  serverFrame(data: Buffer, isBinary: boolean): SimServerEvent[] {
    if (isBinary) return this.serverAudio(data);
    let message: { action?: unknown; payload?: unknown };
    try {
      message = JSON.parse(data.toString('utf8')) as typeof message;
      if (typeof message !== 'object' || message === null) throw new TypeError('not an object');
    } catch {
      return this.warnOnce('server sent a text frame that is not a JSON object; Vonage ignores it');
    }
    switch (message.action) {
      case 'clear':
        this.queueEndsAtMs = 0;
        return [{ type: 'clear' }];
      case 'notify': {
        if (typeof message.payload !== 'object' || message.payload === null) {
          return this.warnOnce('server sent notify without a payload object; Vonage rejects it');
        }
        this.notifyCount += 1;
        const name = `notify-${this.notifyCount}`;
        this.notifies.set(name, message.payload);
        return [{ type: 'mark', name }];
      }
      default:
        return this.warnOnce(
          `server sent unknown action ${JSON.stringify(message.action)}; Vonage ignores it`,
        );
    }
  }

  private serverAudio(data: Buffer): SimServerEvent[] {
    const events: SimServerEvent[] = [];
    if (data.length !== this.frameBytes) {
      events.push(
        ...this.warnOnce(
          `server sent a ${data.length}-byte audio message; Vonage plays exactly one 20 ms frame (${this.frameBytes} bytes) per message`,
        ),
      );
      if (data.length % 2 !== 0) return events;
    }
    const now = this.nowMs();
    this.queueEndsAtMs = Math.max(this.queueEndsAtMs, now) + (data.length / this.frameBytes) * FRAME_MS;
    if ((this.queueEndsAtMs - now) / FRAME_MS > BUFFER_MESSAGES) {
      events.push(
        ...this.warnOnce(
          `server ran more than ${BUFFER_MESSAGES} messages ahead of playback; Vonage drops the excess`,
        ),
      );
    }
    events.push({ type: 'audio', payload: data });
    return events;
  }

  markPlayed(name: string): WireFrame {
    const payload = this.notifies.get(name) ?? {};
    this.notifies.delete(name);
    return JSON.stringify({ event: 'websocket:notify', payload });
  }

  cleared(): WireFrame {
    return JSON.stringify({ event: 'websocket:cleared' });
  }

  /** Vonage sends no last frame: the close ends the stream. */
  stop(): null {
    return null;
  }

  async afterHangup(): Promise<void> {
    // A call the server placed reports its end to the event URL it gave (src/sim/callee/lines/vonage.ts).
    if (this.spec.outbound) return;
    const body = JSON.stringify({
      uuid: this.call.uuid,
      conversation_uuid: this.call.conversationUuid,
      status: 'completed',
      direction: 'inbound',
      from: this.call.from,
      to: this.call.to,
      timestamp: new Date().toISOString(),
    });
    await postEvent(this.spec, body);
  }

  private warnOnce(message: string): SimServerEvent[] {
    if (this.warned.has(message)) return [];
    this.warned.add(message);
    return [{ type: 'warning', message }];
  }
}

async function postEvent(spec: SimCallSpec, body: string): Promise<void> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const jwt = await signVonageWebhook(spec.env, body);
  if (jwt !== undefined) headers.authorization = `Bearer ${jwt}`;
  await carrierFetch({
    url: `${spec.server}/carriers/vonage/events`,
    method: 'POST',
    headers,
    body,
    timeoutMs: spec.timeoutMs,
  });
}

export const vonageDialect: SimDialect = {
  name: 'vonage',

  describeSigning(env: Env): string {
    return signatureSecret(env) === undefined
      ? 'webhooks unsigned (no VONAGE_SIGNATURE_SECRET)'
      : 'webhooks signed with VONAGE_SIGNATURE_SECRET';
  },

  async announce(spec: SimCallSpec): Promise<SimAnswer> {
    const call: VonageCall = {
      uuid: spec.outbound?.callSid ?? randomUUID(),
      conversationUuid: `CON-${randomUUID()}`,
      from: vonageNumber(spec.from),
      to: vonageNumber(spec.to),
    };
    const query = new URLSearchParams({
      to: call.to,
      from: call.from,
      uuid: call.uuid,
      conversation_uuid: call.conversationUuid,
      region_url: 'https://api-us-3.vonage.com',
    });
    const headers: Record<string, string> = { accept: 'application/json' };
    // The answer URL is fetched with GET: the body the hash covers is empty.
    const jwt = await signVonageWebhook(spec.env, '');
    if (jwt !== undefined) headers.authorization = `Bearer ${jwt}`;
    // A call the server placed fetches the answer URL it was created with, Vonage's fields added.
    const answerUrl = spec.outbound
      ? `${spec.outbound.answerUrl}${spec.outbound.answerUrl.includes('?') ? '&' : '?'}${query}`
      : `${spec.server}/carriers/vonage/answer?${query}`;
    const answer = await carrierFetch({
      url: answerUrl,
      method: 'GET',
      headers,
      timeoutMs: spec.timeoutMs,
      signal: spec.signal,
    });
    if (!answer.ok) return { kind: 'failed', error: `answer webhook ${answer.error}` };
    if (answer.status < 200 || answer.status > 299) {
      const error = serverError(answer.body);
      return {
        kind: 'failed',
        error: `answer webhook answered HTTP ${answer.status}${error ? `: ${error.message}` : ''}`,
      };
    }
    const warnings: string[] = [];
    if (!/^application\/json\b/i.test(answer.contentType)) {
      warnings.push(
        `answer webhook answered content-type "${answer.contentType}"; Vonage expects application/json`,
      );
    }
    const ncco = readNcco(answer.body);
    if (ncco.kind === 'bad') return { kind: 'failed', error: ncco.error };
    if (ncco.kind === 'declined')
      return { kind: 'declined', reason: 'the NCCO talks and ends', say: ncco.say };
    return {
      kind: 'stream',
      stream: new VonageSimStream(ncco.endpoint, call, spec),
      observerToken: answer.observerToken,
      warnings,
    };
  },
};
