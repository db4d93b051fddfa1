import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createPlivoAdapter } from '../../../src/carriers/plivo/adapter.js';
import { loadConfig } from '../../../src/carriers/load-config.js';
import { createMetrics } from '../../../src/metrics/metrics.js';
import { MINIMAL_PROJECT } from '../../config/project.js';
import { type FakeCarrierApi, startFakeCarrierApi } from '../../helpers/fake-carrier-api.js';

const logger = pino({ level: 'silent' });
const AUTH_ID = 'MAXXXXXXXXXXXXXXXXXX';
let api: FakeCarrierApi | undefined;

afterEach(async () => {
  await api?.close();
  api = undefined;
});

function config(env: Record<string, string>) {
  return loadConfig(env, { cwd: MINIMAL_PROJECT });
}

describe('plivo adapter', () => {
  it('is verified and controls calls with credentials, neither without', () => {
    const metrics = createMetrics('global');
    expect(createPlivoAdapter(config({}), { logger, metrics })).toMatchObject({
      name: 'plivo',
      verified: false,
      control: null,
    });
    const full = createPlivoAdapter(config({ PLIVO_AUTH_ID: AUTH_ID, PLIVO_AUTH_TOKEN: 't' }), {
      logger,
      metrics,
    });
    expect(full.verified).toBe(true);
    expect(full.control).not.toBeNull();
  });

  it('sends 20 ms multiples downstream', () => {
    const adapter = createPlivoAdapter(config({}), { logger, metrics: createMetrics('global') });
    expect(adapter.downlink({ encoding: 'mulaw', sampleRate: 8000, channels: 1 })).toEqual({
      frameBytes: 160,
    });
  });

  it('points a transfer at the public URL as it is when the transfer happens', async () => {
    api = await startFakeCarrierApi(() => ({ status: 202, body: {} }));
    const cfg = config({ PLIVO_AUTH_ID: AUTH_ID, PLIVO_AUTH_TOKEN: 't', PLIVO_API_URL: api.url });
    const adapter = createPlivoAdapter(cfg, { logger, metrics: createMetrics('global') });
    cfg.publicUrl = 'https://later.example.com';
    await adapter.control!.transfer('c-1', '+15550100');
    expect((JSON.parse(api.requests[0]!.body) as { aleg_url: string }).aleg_url).toBe(
      'https://later.example.com/carriers/plivo/transfer?to=%2B15550100',
    );
  });

  it('uses the simulated carrier API without credentials, and counts requests', async () => {
    api = await startFakeCarrierApi(() => ({ status: 204 }));
    const metrics = createMetrics('global');
    const adapter = createPlivoAdapter(config({}), { logger, metrics, simulatedApiUrl: api.url });
    await adapter.control!.hangup('c-1');
    expect(api.requests[0]!.path).toBe('/v1/Account/MASIMULATED000000000/Call/c-1/');
    expect((await metrics.carrierApiRequests.get()).values[0]).toMatchObject({
      labels: { carrier: 'plivo', operation: 'hang up call', outcome: 'ok' },
      value: 1,
    });
  });
});
