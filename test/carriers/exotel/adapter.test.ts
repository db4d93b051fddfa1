import websocket from '@fastify/websocket';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createExotelAdapter, exotelDownlink } from '../../../src/carriers/exotel/adapter.js';
import { exotelStreamUrl } from '../../../src/carriers/exotel/routes.js';
import { upgradeCredentials } from '../../../src/carriers/exotel/upgrade-auth.js';
import { load, removeProjects } from '../../config/project.js';
import { exotelTarget } from '../../helpers/exotel-carrier.js';

const KEY = 'exotel-api-key';
const TOKEN = 'exotel-api-token-secret-0001';
const SECRET = 'stream-token-secret-of-the-exotel-adapter-test';
const CREDENTIALS = {
  EXOTEL_ACCOUNT_SID: 'acme1',
  EXOTEL_API_KEY: KEY,
  EXOTEL_API_TOKEN: TOKEN,
  EXOTEL_ALLOWED_CIDRS: '127.0.0.1',
  STREAM_TOKEN_SECRET: SECRET,
};

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
  removeProjects();
});

describe('exotel downlink rules', () => {
  it('sends linear PCM at 8 kHz in multiples of 320 bytes, from 3,200 to 99,840', () => {
    expect(exotelDownlink({ encoding: 'linear16', sampleRate: 8000, channels: 1 })).toEqual({
      frameBytes: 320,
      minMessageBytes: 3200,
      maxMessageBytes: 99_840,
    });
  });

  it('keeps every rate and encoding to whole 20 ms frames that are multiples of 320 bytes', () => {
    for (const format of [
      { encoding: 'linear16', sampleRate: 16000, channels: 1 },
      { encoding: 'linear16', sampleRate: 24000, channels: 1 },
      { encoding: 'mulaw', sampleRate: 8000, channels: 1 },
    ] as const) {
      const rules = exotelDownlink(format);
      const frame20 = (format.sampleRate * (format.encoding === 'linear16' ? 2 : 1) * 20) / 1000;
      expect(rules.frameBytes % 320).toBe(0);
      expect(rules.frameBytes % frame20).toBe(0);
      expect(rules.minMessageBytes! % rules.frameBytes).toBe(0);
      expect(rules.maxMessageBytes! % rules.frameBytes).toBe(0);
      expect(rules.minMessageBytes).toBeGreaterThanOrEqual(3200);
      expect(rules.maxMessageBytes).toBeLessThanOrEqual(100_000);
    }
  });
});

describe('exotel adapter', () => {
  it('has no call control: Exotel cannot hang up or transfer a live call, the stream closes instead', () => {
    const adapter = createExotelAdapter(load(CREDENTIALS));
    expect(adapter.name).toBe('exotel');
    expect(adapter.control).toBeNull();
    expect(adapter.verified).toBe(true);
  });

  it('is unverified without EXOTEL_ALLOWED_CIDRS, whatever its credentials', () => {
    expect(createExotelAdapter(load({})).verified).toBe(false);
    const { EXOTEL_ALLOWED_CIDRS: _, ...withoutNetworks } = CREDENTIALS;
    expect(createExotelAdapter(load(withoutNetworks)).verified).toBe(false);
  });

  it('creates a fresh codec per connection', () => {
    const adapter = createExotelAdapter(load({}));
    expect(adapter.createCodec()).not.toBe(adapter.createCodec());
  });
});

/** A media route guarded by the adapter's upgrade check, as the call core registers it. */
async function guardedMediaRoute(env: Record<string, string>): Promise<string> {
  const adapter = createExotelAdapter(load(env));
  app = Fastify({ logger: false });
  await app.register(websocket);
  app.get(
    '/media/exotel/:instance/:token',
    { websocket: true, preValidation: async (req) => adapter.verifyUpgrade!(req) },
    (socket) => socket.close(1000, 'ok'),
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
}

function upgrade(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers });
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.once('open', () => {
      resolve(101);
      ws.close();
    });
    ws.once('error', () => resolve(-1));
  });
}

describe('exotel media upgrade', () => {
  it('admits the upgrade Exotel makes from the URL handed out, and refuses others with 401', async () => {
    const base = await guardedMediaRoute(CREDENTIALS);
    const handedOut = exotelStreamUrl(
      'wss://bridge.example.com/media/exotel/i-1/tok123',
      upgradeCredentials(SECRET, 'tok123'),
      8000,
    );
    const target = exotelTarget(handedOut, base);
    expect(await upgrade(target.url, target.headers)).toBe(101);
    expect(await upgrade(target.url, {})).toBe(401);
    const raw = `Basic ${Buffer.from(`${KEY}:${TOKEN}`).toString('base64')}`;
    expect(await upgrade(target.url, { authorization: raw })).toBe(401);
    // One call's credentials open no other call's stream.
    const other = target.url.replace('tok123', 'tok124');
    expect(await upgrade(other, target.headers)).toBe(401);
  });

  it('refuses an upgrade without credentials outside production too', async () => {
    const base = await guardedMediaRoute({});
    expect(await upgrade(`${base.replace('http', 'ws')}/media/exotel/i-1/tok`, {})).toBe(401);
  });

  it('refuses every upgrade without credentials in production', async () => {
    const base = await guardedMediaRoute({
      NODE_ENV: 'production',
      TWILIO_ACCOUNT_SID: `AC${'0'.repeat(32)}`,
      TWILIO_AUTH_TOKEN: 'x'.repeat(32),
    });
    expect(await upgrade(`${base.replace('http', 'ws')}/media/exotel/i-1/tok`, {})).toBe(401);
  });
});
