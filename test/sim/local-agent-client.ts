// A real `ws` client for the local agent tests: records every frame in arrival order, so a test can
// wait for events and check their order and the audio between them. Plus caller audio generators.
import WebSocket from 'ws';
import { AGENT_PATH } from '../../src/agent/protocol.js';
import { encodeLinear16, encodeMulaw } from '../../src/audio/codec.js';

export type Received =
  { kind: 'json'; msg: Record<string, unknown> & { type: string } } | { kind: 'audio'; bytes: Buffer };

const WAIT_MS = 5000;

export class AgentTestClient {
  readonly ws: WebSocket;
  readonly received: Received[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  /** Index in `received` after the last item a `next*` call returned. */
  cursor = 0;
  #wake: (() => void)[] = [];

  private constructor(ws: WebSocket) {
    this.ws = ws;
    this.closed = new Promise((resolve) => {
      ws.on('close', (code, reason) => {
        resolve({ code, reason: reason.toString() });
        this.#notify();
      });
    });
    ws.on('message', (data, isBinary) => {
      const bytes = data as Buffer;
      if (isBinary) this.received.push({ kind: 'audio', bytes });
      else this.received.push({ kind: 'json', msg: JSON.parse(bytes.toString('utf8')) });
      this.#notify();
    });
  }

  static async connect(baseUrl: string, authorization = 'Token test-key'): Promise<AgentTestClient> {
    const ws = new WebSocket(`${baseUrl}${AGENT_PATH}`, { headers: { authorization } });
    const client = new AgentTestClient(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return client;
  }

  /** Connects and completes Welcome → Settings → SettingsApplied. */
  static async live(
    baseUrl: string,
    settings: Record<string, unknown> = makeSettings(),
  ): Promise<AgentTestClient> {
    const client = await AgentTestClient.connect(baseUrl);
    await client.next('Welcome');
    client.send(settings);
    await client.next('SettingsApplied');
    return client;
  }

  send(msg: Record<string, unknown>): void {
    this.ws.send(JSON.stringify(msg));
  }

  sendAudio(bytes: Buffer): void {
    this.ws.send(bytes, { binary: true });
  }

  /** The next JSON message after the cursor, which must be of `type` (audio in between is skipped). */
  async next(type: string): Promise<Record<string, unknown>> {
    const found = await this.#waitFrom(this.cursor, (item) => item.kind === 'json');
    const item = found.item as Extract<Received, { kind: 'json' }>;
    this.cursor = found.index + 1;
    if (item.msg.type !== type) throw new Error(`expected ${type}, got ${JSON.stringify(item.msg)}`);
    return item.msg;
  }

  /** Skips to the first JSON message of `type` after the cursor. */
  async until(type: string): Promise<Record<string, unknown>> {
    const found = await this.#waitFrom(this.cursor, (item) => item.kind === 'json' && item.msg.type === type);
    this.cursor = found.index + 1;
    return (found.item as Extract<Received, { kind: 'json' }>).msg;
  }

  /** Resolves once the first audio frame after the cursor has arrived. */
  async firstAudio(): Promise<void> {
    await this.#waitFrom(this.cursor, (item) => item.kind === 'audio');
  }

  /** Audio bytes received between two indexes of `received` (end exclusive). */
  audioBytes(from = 0, to = this.received.length): Buffer {
    const parts = this.received
      .slice(from, to)
      .flatMap((item) => (item.kind === 'audio' ? [item.bytes] : []));
    return Buffer.concat(parts);
  }

  /** Index of the first JSON message of `type` at or after `from`, or -1. */
  indexOf(type: string, from = 0): number {
    return this.received.findIndex((item, i) => i >= from && item.kind === 'json' && item.msg.type === type);
  }

  close(): void {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING)
      this.ws.terminate();
  }

  async #waitFrom(
    start: number,
    match: (item: Received) => boolean,
  ): Promise<{ item: Received; index: number }> {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const index = this.received.findIndex((item, i) => i >= start && match(item));
      if (index >= 0) return { item: this.received[index]!, index };
      if (this.ws.readyState === WebSocket.CLOSED) throw new Error('socket closed while waiting');
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`nothing matching after ${WAIT_MS} ms; got ${this.describe()}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        this.#wake.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  describe(): string {
    return this.received
      .map((item) => (item.kind === 'json' ? item.msg.type : `audio(${item.bytes.length})`))
      .join(', ');
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = [];
    for (const fn of wake) fn();
  }
}

/** The HTTP status of a refused upgrade (the socket never opens). */
export function refusedStatus(baseUrl: string, authorization?: string, path = AGENT_PATH): Promise<number> {
  const ws = new WebSocket(`${baseUrl}${path}`, authorization ? { headers: { authorization } } : {});
  return new Promise((resolve, reject) => {
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
      ws.terminate();
    });
    ws.once('open', () => {
      ws.terminate();
      reject(new Error('the upgrade was accepted'));
    });
    ws.once('error', (err) => reject(err));
  });
}

export function makeSettings(
  overrides: {
    input?: Record<string, unknown>;
    output?: Record<string, unknown>;
    agent?: Record<string, unknown>;
  } = {},
): Record<string, unknown> {
  return {
    type: 'Settings',
    audio: {
      input: overrides.input ?? { encoding: 'mulaw', sample_rate: 8000 },
      output: overrides.output ?? { encoding: 'mulaw', sample_rate: 8000, container: 'none' },
    },
    agent: {
      language: 'en',
      think: { provider: { type: 'open_ai', model: 'gpt-4o-mini' }, prompt: 'Be brief.' },
      ...overrides.agent,
    },
  };
}

/** A 440 Hz tone: loud enough to count as speech. */
export function toneSamples(ms: number, sampleRate = 8000, amplitude = 8000, hz = 440): Int16Array {
  const samples = new Int16Array(Math.round((sampleRate * ms) / 1000));
  for (let i = 0; i < samples.length; i++)
    samples[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / sampleRate));
  return samples;
}

export function toneMulaw(ms: number): Buffer {
  return encodeMulaw(toneSamples(ms));
}

/** μ-law silence: 0xFF is the code of a zero sample. */
export function silenceMulaw(ms: number): Buffer {
  return Buffer.alloc((8000 * ms) / 1000, 0xff);
}

export function toneLinear16(ms: number, sampleRate: number): Buffer {
  return encodeLinear16(toneSamples(ms, sampleRate));
}

export function silenceLinear16(ms: number, sampleRate: number): Buffer {
  return Buffer.alloc(((sampleRate * ms) / 1000) * 2);
}

/** Sends audio in 20 ms frames, as a phone leg does. */
export function sendFrames(client: AgentTestClient, audio: Buffer, frameBytes = 160): void {
  for (let at = 0; at < audio.length; at += frameBytes) client.sendAudio(audio.subarray(at, at + frameBytes));
}
