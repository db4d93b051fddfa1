// Adding a carrier is its folder and one line in src/carriers/registry.ts (docs/carriers.md). A
// stand-in carrier, defined in a test fixture and added to a copy of the list, is configured,
// served, verified, checked by the doctor and places calls, with nothing else of the server told
// about it: the list is the only place a carrier is named.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { buildCallPlacers } from '../../src/carriers/index.js';
import { loadConfig } from '../../src/carriers/load-config.js';
import { CARRIERS } from '../../src/carriers/registry.js';
import { envError, isSecretName } from '../../src/config/env.js';
import { runDoctor } from '../../src/doctor/doctor.js';
import { formatLine } from '../../src/doctor/report.js';
import { configErrorOf, MINIMAL_PROJECT } from '../config/project.js';
import { type FakeAgent, startFakeAgent } from '../helpers/fake-agent.js';
import { startServer, type TestServer } from '../helpers/server.js';
import {
  STANDIN_SIGNATURE_HEADER,
  STANDIN_VOICE_PATH,
  standinCarrier,
  standinPlaced,
} from './fixtures/standin.js';
import WebSocket from 'ws';

const LIST = [...CARRIERS, standinCarrier];
const TOKEN = 'standin-auth-token-0001';

let server: TestServer | undefined;
let agent: FakeAgent | undefined;
let api: Server | undefined;

afterEach(async () => {
  await server?.close();
  await agent?.close();
  api?.close();
  server = agent = api = undefined;
});

const load = (env: Record<string, string>) => loadConfig(env, { cwd: MINIMAL_PROJECT }, LIST);

describe('a carrier added to the list', () => {
  it('reads its own variables, its secret never quoted', () => {
    const config = load({ STANDIN_AUTH_TOKEN: TOKEN, STANDIN_API_URL: 'http://127.0.0.1:9/' });
    expect((config as unknown as Record<string, unknown>).standin).toEqual({
      authToken: TOKEN,
      apiUrl: 'http://127.0.0.1:9',
    });
    expect(configErrorOf(() => load({ STANDIN_AUTH_TOKEN: 'short' })).message).toBe(
      'STANDIN_AUTH_TOKEN: is too short',
    );
    expect(isSecretName('STANDIN_AUTH_TOKEN')).toBe(true);
    expect(envError('STANDIN_AUTH_TOKEN', 'is wrong', 'hunter2').message).not.toContain('hunter2');
    // Its secret is the one instances derive their stream token key from when no other is set.
    expect(load({ STANDIN_AUTH_TOKEN: TOKEN }).streamTokenSecret).toBe(
      load({ STANDIN_AUTH_TOKEN: TOKEN }).streamTokenSecret,
    );
  });

  it('is enough for production, and is named among the carriers production may have', () => {
    expect(load({ NODE_ENV: 'production', STANDIN_AUTH_TOKEN: TOKEN }).nodeEnv).toBe('production');
    expect(configErrorOf(() => load({ NODE_ENV: 'production' })).message).toMatch(
      /^TWILIO_AUTH_TOKEN: required when NODE_ENV=production, .*STANDIN_AUTH_TOKEN/,
    );
  });

  it('places calls once configured', async () => {
    const placers = buildCallPlacers(load({ STANDIN_AUTH_TOKEN: TOKEN }), {}, LIST);
    const standin = placers.find((placer) => placer.carrier === 'standin');
    expect(standin).toBeDefined();
    await standin!.place({ to: '+15550123', from: null, context: 'ctx', detectMachine: false });
    expect(standinPlaced).toContain('+15550123');
    expect(buildCallPlacers(load({}), {}, LIST).map((placer) => placer.carrier)).not.toContain('standin');
  });

  it('is served: a verified call reaches the agent over its own webhook and media stream', async () => {
    agent = await startFakeAgent({ autoApply: true });
    server = await startServer(
      { AGENT_URL: agent.url, AGENT_API_KEY: 'key', STANDIN_AUTH_TOKEN: TOKEN },
      { carrierList: LIST },
    );
    const forged = await fetch(`${server.baseUrl}${STANDIN_VOICE_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [STANDIN_SIGNATURE_HEADER]: 'not-the-token-000000' },
      body: JSON.stringify({ callSid: 'SI-forged', from: '+15550100', to: '+15550101' }),
    });
    expect(forged.status).toBe(403);
    const answer = await fetch(`${server.baseUrl}${STANDIN_VOICE_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [STANDIN_SIGNATURE_HEADER]: TOKEN },
      body: JSON.stringify({ callSid: 'SI-1', from: '+15550100', to: '+15550101' }),
    });
    expect(answer.status).toBe(200);
    const { stream } = (await answer.json()) as { stream: string };
    expect(stream).toMatch(/\/media\/standin\//);
    const ws = new WebSocket(stream);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    ws.send(JSON.stringify({ event: 'start', start: { callSid: 'SI-1' } }));
    const conn = await agent.nextConnection();
    expect((await conn.waitFor('Settings')).type).toBe('Settings');
    ws.send(JSON.stringify({ event: 'stop' }));
    ws.close();
  });

  it('is checked by the doctor like every carrier', async () => {
    api = createServer((req, res) => {
      const good = req.url === '/account' && req.headers.authorization === `Bearer ${TOKEN}`;
      res.writeHead(good ? 200 : 401, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => api!.listen(0, '127.0.0.1', resolve));
    const apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
    const lines = await runDoctor(
      { STANDIN_AUTH_TOKEN: TOKEN, STANDIN_API_URL: apiUrl, DATA_DIR: '/nonexistent/callbridge-data' },
      { cwd: MINIMAL_PROJECT, timeoutMs: 2_000, carriers: LIST },
    );
    const text = lines.map(formatLine);
    expect(text).toContain('ok   STANDIN_AUTH_TOKEN is set: carrier requests are verified');
    expect(text).toContain(`ok   Standin API ${apiUrl}: credentials accepted`);
    expect(text.join('\n')).not.toContain(TOKEN);
  });
});
