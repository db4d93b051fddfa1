// The simulated carrier playing Exotel's Voicebot applet (docs/protocols/exotel.md): the applet's
// dynamic URL is fetched with the call's details as query parameters, and the `{"url": "wss://…"}`
// it answers is dialed, with Basic auth when the URL carries a user and password. The stream sends
// `connected`, `start` (numbers as strings), caller audio in `media` messages of about 100 ms, echoes
// marks once the audio before them has played, and ends with `stop`; a status callback follows. An
// outbound call (placed through the simulated API) asks the applet URL as `outbound-api`, its
// `From` the number called, and its status callback is the simulated callee's to post.
import { randomBytes } from 'node:crypto';
import type { MediaFormat } from '../../../audio/format.js';
import type { WireFrame } from '../../../call/carrier-port.js';
import type { SimAnswer, SimCallSpec, SimDialect, SimServerEvent, SimStream } from '../dialect.js';
import { carrierFetch, serverError } from './fetch-answer.js';
import { markName, readServerJson, unknownEventWarning } from './server-json.js';

const FRAME_MS = 20;
/** Exotel batches caller audio into messages of about 100 ms. */
const FRAMES_PER_MESSAGE = 5;
/** Exotel plays outbound chunks without gaps only in multiples of 320 bytes, from 3,200 to 100,000. */
const CHUNK_MULTIPLE_BYTES = 320;
const MIN_CHUNK_BYTES = 3_200;
const MAX_CHUNK_BYTES = 100_000;
/** At most three query parameters come back as `custom_parameters`. */
const MAX_CUSTOM_PARAMETERS = 3;
const EXOTEL_RATES = new Set([8000, 16000, 24000]);

type Env = Record<string, string | undefined>;

/** An Exotel sid: 32 hexadecimal digits. */
export function exotelSid(): string {
  return randomBytes(16).toString('hex');
}

export interface StreamTarget {
  /** The URL dialed: no user or password in it. */
  url: string;
  /** `Authorization: Basic …` when the URL carried credentials. */
  authorization: string | undefined;
  sampleRate: number;
  customParameters: Record<string, string>;
}

/** How Exotel reads the URL it was given: credentials become Basic auth, the query becomes parameters. */
export function readStreamUrl(raw: string): StreamTarget | { error: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { error: "the answer's url is not an absolute URL" };
  }
  if (url.protocol !== 'wss:' && url.protocol !== 'ws:')
    return { error: "the answer's url must be a wss:// (or ws://) URL" };
  const authorization =
    url.username === '' && url.password === ''
      ? undefined
      : `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
  let sampleRate = 8000;
  const customParameters: Record<string, string> = {};
  for (const [key, value] of url.searchParams) {
    if (key === 'sample-rate') {
      if (!EXOTEL_RATES.has(Number(value))) return { error: 'sample-rate must be 8000, 16000 or 24000' };
      sampleRate = Number(value);
    } else if (Object.keys(customParameters).length < MAX_CUSTOM_PARAMETERS) {
      customParameters[key] = value;
    }
  }
  url.username = '';
  url.password = '';
  return { url: url.href, authorization, sampleRate, customParameters };
}

/** Exotel writes Indian numbers as dialed in India, with the trunk 0; others as given. */
export function exotelNumber(e164: string): string {
  return /^\+91\d{10}$/.test(e164) ? `0${e164.slice(3)}` : e164;
}

interface ExotelCall {
  callSid: string;
  accountSid: string;
  from: string;
  to: string;
}

class ExotelSimStream implements SimStream {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly format: MediaFormat;
  readonly callSid: string;
  readonly streamSid: string;
  private sequence = 0;
  private chunk = 0;
  private pending: Buffer[] = [];
  private readonly warned = new Set<string>();

  constructor(
    private readonly target: StreamTarget,
    private readonly call: ExotelCall,
    private readonly spec: SimCallSpec,
  ) {
    this.url = target.url;
    this.headers = target.authorization === undefined ? {} : { authorization: target.authorization };
    this.format = { encoding: 'linear16', sampleRate: target.sampleRate, channels: 1 };
    this.callSid = call.callSid;
    this.streamSid = exotelSid();
  }

  opening(): WireFrame[] {
    return [
      JSON.stringify({ event: 'connected' }),
      JSON.stringify({
        event: 'start',
        sequence_number: this.nextSequence(),
        stream_sid: this.streamSid,
        start: {
          stream_sid: this.streamSid,
          call_sid: this.call.callSid,
          account_sid: this.call.accountSid,
          from: this.call.from,
          to: this.call.to,
          custom_parameters: this.target.customParameters,
          media_format: {
            encoding: 'audio/x-raw',
            sample_rate: String(this.format.sampleRate),
            bit_rate: '16',
          },
        },
      }),
    ];
  }

  callerAudio(frame: Buffer): WireFrame[] {
    this.pending.push(frame);
    if (this.pending.length < FRAMES_PER_MESSAGE) return [];
    const payload = Buffer.concat(this.pending);
    this.pending = [];
    this.chunk += 1;
    return [
      JSON.stringify({
        event: 'media',
        sequence_number: this.nextSequence(),
        stream_sid: this.streamSid,
        media: {
          chunk: String(this.chunk),
          timestamp: String((this.chunk - 1) * FRAMES_PER_MESSAGE * FRAME_MS),
          payload: payload.toString('base64'),
        },
      }),
    ];
  }

  dtmf(digit: string): WireFrame {
    return JSON.stringify({
      event: 'dtmf',
      sequence_number: this.nextSequence(),
      stream_sid: this.streamSid,
      dtmf: { digit, duration: '200' },
    });
  }

  serverFrame(data: Buffer, isBinary: boolean): SimServerEvent[] {
    const read = readServerJson(data, isBinary, 'Exotel');
    if (!read.ok) return this.warnOnce(read.warning);
    const message = read.message;
    const event = message.event;
    if (
      (event === 'media' || event === 'mark' || event === 'clear') &&
      message.stream_sid !== this.streamSid
    ) {
      return this.warnOnce(`server sent "${event}" without this stream's stream_sid; Exotel ignores it`);
    }
    switch (event) {
      case 'media':
        return this.serverAudio(message.media);
      case 'mark': {
        const name = markName(message);
        if (name === undefined) return this.warnOnce('server sent a mark without mark.name; ignored');
        return [{ type: 'mark', name }];
      }
      case 'clear':
        return [{ type: 'clear' }];
      default:
        return this.warnOnce(unknownEventWarning(event));
    }
  }

  private serverAudio(media: unknown): SimServerEvent[] {
    const payload = (media as { payload?: unknown } | undefined)?.payload;
    if (typeof payload !== 'string') return this.warnOnce('server sent media without media.payload; ignored');
    const audio = Buffer.from(payload, 'base64');
    const events: SimServerEvent[] = [];
    if (audio.toString('base64') !== payload)
      events.push(...this.warnOnce('server sent media whose payload is not strict base64'));
    const size = audio.length;
    if (size % CHUNK_MULTIPLE_BYTES !== 0 || size < MIN_CHUNK_BYTES || size > MAX_CHUNK_BYTES) {
      events.push(
        ...this.warnOnce(
          `server sent a ${size}-byte media chunk; Exotel plays chunks without gaps only in multiples of 320 bytes from 3,200 to 100,000`,
        ),
      );
    }
    if (size % 2 !== 0) return events;
    events.push({ type: 'audio', payload: audio });
    return events;
  }

  markPlayed(name: string): WireFrame {
    return JSON.stringify({
      event: 'mark',
      sequence_number: this.nextSequence(),
      stream_sid: this.streamSid,
      mark: { name },
    });
  }

  /** Exotel does not confirm a clear. */
  cleared(): null {
    return null;
  }

  stop(): WireFrame {
    return JSON.stringify({
      event: 'stop',
      sequence_number: this.nextSequence(),
      stream_sid: this.streamSid,
      stop: { call_sid: this.call.callSid, account_sid: this.call.accountSid, reason: 'callended' },
    });
  }

  async afterHangup(): Promise<void> {
    if (this.spec.outbound) return;
    await carrierFetch({
      url: `${this.spec.server}/carriers/exotel/status`,
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        CallSid: this.call.callSid,
        Status: 'completed',
        From: this.call.from,
        To: this.call.to,
        Direction: 'inbound',
      }).toString(),
      timeoutMs: this.spec.timeoutMs,
    });
  }

  // Exotel numbers its messages as decimal strings.
  private nextSequence(): string {
    this.sequence += 1;
    return String(this.sequence);
  }

  private warnOnce(message: string): SimServerEvent[] {
    if (this.warned.has(message)) return [];
    this.warned.add(message);
    return [{ type: 'warning', message }];
  }
}

export const exotelDialect: SimDialect = {
  name: 'exotel',

  describeSigning(env: Env): string {
    // Exotel signs nothing; credentials show only as Basic auth in the URL the server hands out.
    return env.EXOTEL_API_KEY
      ? 'requests unsigned (Exotel signs none); media upgrade with the Basic auth the server hands out'
      : 'requests unsigned (Exotel signs none)';
  },

  async announce(spec: SimCallSpec): Promise<SimAnswer> {
    const call: ExotelCall = {
      callSid: spec.outbound?.callSid ?? exotelSid(),
      accountSid: spec.outbound?.accountSid ?? spec.env.EXOTEL_ACCOUNT_SID ?? 'callbridgesim1',
      from: exotelNumber(spec.from),
      to: exotelNumber(spec.to),
    };
    const query = new URLSearchParams({
      CallSid: call.callSid,
      CallFrom: call.from,
      CallTo: call.to,
      From: call.from,
      To: call.to,
      Direction: spec.outbound ? 'outbound-api' : 'incoming',
      CallStatus: 'in-progress',
      CallType: 'call-attempt',
    });
    // Exotel's applets receive the CustomField an outbound call was created with
    // (docs/protocols/exotel.md, "Outbound, as callbridge does it").
    if (spec.outbound?.customField) query.set('CustomField', spec.outbound.customField);
    const applet = spec.outbound?.answerUrl ?? `${spec.server}/carriers/exotel/stream`;
    const answer = await carrierFetch({
      url: `${applet}?${query}`,
      method: 'GET',
      headers: { accept: 'application/json' },
      timeoutMs: spec.timeoutMs,
      signal: spec.signal,
    });
    if (!answer.ok) return { kind: 'failed', error: `stream URL ${answer.error}` };
    const error = serverError(answer.body);
    if (answer.status === 503 && error?.code === 'CALLBRIDGE_UNAVAILABLE') {
      return { kind: 'declined', reason: error.message };
    }
    if (answer.status < 200 || answer.status > 299) {
      return {
        kind: 'failed',
        error: `stream URL answered HTTP ${answer.status}${error ? `: ${error.message}` : ''}`,
      };
    }
    let url: unknown;
    try {
      url = (JSON.parse(answer.body) as { url?: unknown }).url;
    } catch {
      url = undefined;
    }
    if (typeof url !== 'string')
      return { kind: 'failed', error: 'the answer is not JSON with a "url" string' };
    const target = readStreamUrl(url);
    if ('error' in target) return { kind: 'failed', error: target.error };
    return {
      kind: 'stream',
      stream: new ExotelSimStream(target, call, spec),
      observerToken: answer.observerToken,
      warnings: [],
    };
  },
};
