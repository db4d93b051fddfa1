import { generateKeyPairSync } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createVonageAdapter,
  VONAGE_PACE_AHEAD_MS,
  vonageDownlink,
} from '../../../src/carriers/vonage/adapter.js';
import { load, removeProjects } from '../../config/project.js';
import type { FakeCarrierApi } from '../../helpers/fake-carrier-api.js';
import { startFakeVonageApi } from '../../helpers/fake-vonage-api.js';

const APP_ID = '11111111-2222-4333-8444-555555555555';
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PRIVATE_PEM = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

const apis: FakeCarrierApi[] = [];
afterEach(async () => {
  for (const api of apis.splice(0)) await api.close();
  removeProjects();
});

describe('vonage downlink rules', () => {
  it('sends exactly one 20 ms frame per message, paced a second ahead', () => {
    expect(vonageDownlink({ encoding: 'linear16', sampleRate: 16000, channels: 1 })).toEqual({
      frameBytes: 640,
      maxMessageBytes: 640,
      paceAheadMs: 1000,
    });
    expect(vonageDownlink({ encoding: 'linear16', sampleRate: 8000, channels: 1 })).toMatchObject({
      frameBytes: 320,
      maxMessageBytes: 320,
    });
  });

  it("keeps what is paced ahead far below Vonage's 3,072-message buffer", () => {
    // One audio message and at most one notify per 20 ms frame.
    expect(((VONAGE_PACE_AHEAD_MS / 20) * 2) / 3072).toBeLessThan(0.05);
  });
});

describe('vonage adapter', () => {
  it('has control with the application and key, none without', () => {
    const configured = createVonageAdapter(
      load({ VONAGE_APPLICATION_ID: APP_ID, VONAGE_PRIVATE_KEY: PRIVATE_PEM }),
    );
    expect(configured.name).toBe('vonage');
    expect(configured.control).not.toBeNull();
    expect(configured.verified).toBe(false);
    const bare = createVonageAdapter(load({ VONAGE_SIGNATURE_SECRET: 'secret-secret-secret' }));
    expect(bare.control).toBeNull();
    expect(bare.verified).toBe(true);
    expect(bare.verifyUpgrade).toBeUndefined();
  });

  it('hangs up and transfers through the Voice API', async () => {
    const api = await startFakeVonageApi();
    apis.push(api);
    const adapter = createVonageAdapter(
      load({ VONAGE_APPLICATION_ID: APP_ID, VONAGE_PRIVATE_KEY: PRIVATE_PEM, VONAGE_API_URL: api.url }),
    );
    await adapter.control!.hangup('call-1');
    await adapter.control!.transfer('call-1', '+15550100');
    expect(api.requests.map((r) => [r.method, r.path, JSON.parse(r.body).action])).toEqual([
      ['PUT', '/v1/calls/call-1', 'hangup'],
      ['PUT', '/v1/calls/call-1', 'transfer'],
    ]);
    const claims = jwt.verify(api.requests[0]!.authorization!.slice(7), publicKey, { algorithms: ['RS256'] });
    expect(claims).toMatchObject({ application_id: APP_ID });
  });
});
