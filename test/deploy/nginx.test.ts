// The VM fleet's balancer (deploy/nginx/render.mjs) in the real nginx, in front of stand-in
// instances that name themselves: webhooks spread over the instances, a media stream reaches the
// instance its URL names (WebSocket upgrade through nginx), an unknown name still reaches one, an
// instance that is not ready gets no new webhooks, and one that is gone is stepped around. Needs
// nginx (Debian's package); skipped, saying so, without it.
import { request as httpRequest } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { renderBalancerConfig } from '../../deploy/nginx/render.mjs';
import { type Balancer, checkHttpConfig, NGINX, startBalancer } from '../helpers/nginx.js';
import { type FakeInstance, startFakeInstance } from './fake-instance.js';

if (!NGINX) console.warn('skipping test/deploy/nginx.test.ts: nginx not found (apt-get install nginx)');

const NAMES = ['callbridge-1', 'callbridge-2', 'callbridge-3'];

/**
 * One request on a connection of its own, as carriers and providers make them: a kept-alive
 * connection may meet a worker that a reload is retiring, which closes it between requests.
 */
async function request(balancer: Balancer, method: string, path: string, body?: string) {
  return new Promise<{ status: number; json: Record<string, unknown> & { instance?: string } }>(
    (resolve, reject) => {
      const req = httpRequest(
        `${balancer.baseUrl}${path}`,
        {
          method,
          agent: false,
          headers: body === undefined ? {} : { 'content-type': 'application/json' },
          timeout: 5_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              json: JSON.parse(Buffer.concat(chunks).toString('utf8')),
            }),
          );
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
      req.on('error', reject);
      req.end(body);
    },
  );
}

/** Opens a media WebSocket through the balancer; resolves with the instance that greeted it, after an echo. */
async function openMedia(balancer: Balancer, path: string): Promise<string> {
  const socket = new WebSocket(`${balancer.wsUrl}${path}`);
  try {
    const messages: string[] = [];
    const next = () =>
      new Promise<string>((resolve, reject) => {
        if (messages.length > 0) return resolve(messages.shift()!);
        const timer = setTimeout(() => reject(new Error(`no message on ${path}`)), 5_000);
        socket.once('message', (data) => {
          clearTimeout(timer);
          resolve(String(data));
        });
        socket.once('error', reject);
      });
    const greeting = JSON.parse(await next()) as { instance: string; url: string };
    expect(greeting.url).toBe(path);
    socket.send('{"event":"media"}');
    expect(await next()).toBe('{"event":"media"}');
    return greeting.instance;
  } finally {
    socket.close();
  }
}

function countBy(values: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

describe.skipIf(!NGINX)('the nginx balancer of a VM fleet', () => {
  let instances: FakeInstance[];
  let balancer: Balancer;

  beforeAll(async () => {
    instances = await Promise.all(NAMES.map((name) => startFakeInstance(name)));
    balancer = await startBalancer(instances.map(({ name, address }) => ({ name, address })));
  });
  afterAll(async () => {
    await balancer?.stop();
    await Promise.all((instances ?? []).map((instance) => instance.close()));
  });
  afterEach(async () => {
    // Every test starts with every instance ready.
    if (!balancer) return;
    for (const instance of instances) instance.setReady(true);
    await balancer.syncReadiness();
  });

  const webhookRound = async (count: number) => {
    const paths = ['/webhooks/code', '/carriers/twilio/voice', '/v1/calls?live=true'];
    const reached: string[] = [];
    for (let i = 0; i < count; i++) {
      const path = paths[i % paths.length]!;
      const admin = path.startsWith('/v1');
      const { status, json } = await request(
        balancer,
        admin ? 'GET' : 'POST',
        path,
        admin ? undefined : '{}',
      );
      expect(status, path).toBe(200);
      reached.push(json.instance!);
    }
    return countBy(reached);
  };

  it('spreads webhooks, carrier webhooks and admin calls over every instance', async () => {
    const counts = await webhookRound(30);
    expect(Object.keys(counts).sort()).toEqual(NAMES);
    for (const name of NAMES) expect(counts[name], name).toBeGreaterThanOrEqual(5);
  });

  it('tells the instance who called: X-Forwarded-For, -Proto, -Host, and the Host as sent', async () => {
    const before = instances.map((i) => i.requests.length);
    await request(balancer, 'POST', '/webhooks/tasks', '{}');
    const seen = instances.flatMap((instance, i) => instance.requests.slice(before[i]))[0]!;
    expect(seen.url).toBe('/webhooks/tasks');
    expect(seen.headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(seen.headers['x-forwarded-proto']).toBe('http');
    expect(seen.headers['x-forwarded-host']).toBe(new URL(balancer.baseUrl).host);
    expect(seen.headers.host).toBe(new URL(balancer.baseUrl).host);
  });

  it('routes every media stream to the instance its URL names, over WebSocket', async () => {
    for (const name of NAMES) {
      for (let i = 0; i < 3; i++) {
        expect(await openMedia(balancer, `/media/twilio/${name}/token-${i}?n=${i}`)).toBe(name);
      }
      expect(await openMedia(balancer, `/media/telnyx/${name}`)).toBe(name);
    }
  });

  it('carries a media stream whose instance it does not know to some instance', async () => {
    const reached: string[] = [];
    for (const path of ['/media/twilio/no-such-instance/t', '/media/twilio', '/media/vonage/']) {
      reached.push(await openMedia(balancer, path));
    }
    // A name that only begins like a known one is unknown too, so it is spread like the others.
    for (let i = 0; i < 6; i++) reached.push(await openMedia(balancer, `/media/twilio/callbridge-1x/t${i}`));
    for (const name of reached) expect(NAMES).toContain(name);
    expect(new Set(reached).size).toBeGreaterThan(1);
  });

  it('sends no new webhooks to an instance whose /readyz answers 503, while its media still reach it', async () => {
    const draining = instances[1]!;
    draining.setReady(false);
    const probed = await balancer.syncReadiness();
    expect(probed.map((i) => i.ready)).toEqual([true, false, true]);

    const counts = await webhookRound(24);
    expect(counts[draining.name]).toBeUndefined();
    expect(Object.keys(counts).sort()).toEqual(['callbridge-1', 'callbridge-3']);
    // The calls it answered before draining still connect to it.
    expect(await openMedia(balancer, `/media/twilio/${draining.name}/late-stream`)).toBe(draining.name);

    draining.setReady(true);
    await balancer.syncReadiness();
    expect(Object.keys(await webhookRound(24)).sort()).toEqual(NAMES);
  });

  it('keeps sending webhooks to every instance when none is ready, rather than to none', async () => {
    for (const instance of instances) instance.setReady(false);
    await balancer.syncReadiness();
    expect(Object.keys(await webhookRound(12)).sort()).toEqual(NAMES);
  });

  it('answers 404 for what it does not serve, and passes webhook bodies over the gateway limit', async () => {
    for (const path of ['/metrics', '/healthz', '/readyz', '/admin', '/v1']) {
      const { status, json } = await request(balancer, 'GET', path);
      expect(status, path).toBe(404);
      expect(json).toMatchObject({ error: { code: 'CALLBRIDGE_NOT_FOUND' } });
    }
    const body = 'x'.repeat(1024 * 1024 + 1);
    const { status, json } = await request(balancer, 'POST', '/webhooks/code', body);
    expect(status).toBe(200);
    expect(json.bodyBytes).toBe(body.length);
  });
});

describe.skipIf(!NGINX)('the nginx balancer with an instance gone', () => {
  const started: FakeInstance[] = [];
  let balancer: Balancer | undefined;
  afterAll(async () => {
    await balancer?.stop();
    await Promise.all(started.map((instance) => instance.close()));
  });

  it('carries the streams and webhooks of an unreachable instance on the others', async () => {
    const [alive, gone] = await Promise.all([startFakeInstance('edge-a'), startFakeInstance('edge-b')]);
    started.push(alive!, gone!);
    balancer = await startBalancer(started.map(({ name, address }) => ({ name, address })));
    await gone!.close();
    expect(await openMedia(balancer, '/media/twilio/edge-b/orphan')).toBe('edge-a');
    for (let i = 0; i < 6; i++)
      expect((await request(balancer, 'POST', '/webhooks/code', '{}')).json.instance).toBe('edge-a');
  });
});

describe('the rendered balancer configuration', () => {
  const text = renderBalancerConfig([
    { name: 'callbridge-1', address: '10.0.0.11:8080' },
    { name: 'callbridge-2', address: '10.0.0.12:8080', ready: false },
  ]);
  const location = (head: string) => {
    const start = text.indexOf(`location ${head} {`);
    return text.slice(start, text.indexOf('}', start));
  };

  it('holds media streams for hours and everything else for a minute', () => {
    expect(location('^~ /media/')).toContain('proxy_read_timeout 2h;');
    expect(location('^~ /media/')).toContain('proxy_send_timeout 2h;');
    expect(location('^~ /media/')).toContain('proxy_set_header Upgrade $http_upgrade;');
    expect(location('~ ^/(carriers/|webhooks/)')).toContain('proxy_read_timeout 60s;');
    expect(location('~ ^/(v1/|$)')).toContain('proxy_read_timeout 60s;');
  });

  it('passes a webhook on to the next instance when one stops, never an admin request', () => {
    // A rolling deploy refuses no webhook (docs/deploy.md); placing a call is never sent twice.
    expect(location('~ ^/(carriers/|webhooks/)')).toContain(
      'proxy_next_upstream error timeout non_idempotent;',
    );
    expect(location('~ ^/(v1/|$)')).not.toContain('non_idempotent');
  });

  it('renders a not-ready instance down for webhooks but still first for its own media', () => {
    expect(text).toMatch(/server 10\.0\.0\.12:8080 max_fails=3 fail_timeout=10s down;/);
    expect(text).toMatch(/upstream callbridge_media_callbridge-2 \{\n {4}server 10\.0\.0\.12:8080;/);
  });

  it('refuses instance lists nginx could not route by', () => {
    expect(() => renderBalancerConfig([])).toThrow('at least one instance');
    const twice = { name: 'a', address: '10.0.0.1:8080' };
    expect(() => renderBalancerConfig([twice, twice])).toThrow('listed twice');
    for (const bad of [
      { name: 'has space', address: '10.0.0.1:8080' },
      { name: 'semi;colon', address: '10.0.0.1:8080' },
      { name: '{brace}', address: '10.0.0.1:8080' },
      { name: 'ok', address: '10.0.0.1' },
      { name: 'ok', address: 'http://10.0.0.1:8080' },
    ]) {
      expect(() => renderBalancerConfig([bad]), JSON.stringify(bad)).toThrow();
    }
  });

  it.skipIf(!NGINX)('passes nginx -t', () => {
    const check = checkHttpConfig(text);
    expect(check.ok, check.output).toBe(true);
  });
});
