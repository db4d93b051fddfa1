// Contexts and contact variables never travel through a carrier (docs/security.md, "Outbound
// contexts"): for every carrier that places calls, the requests the server makes of the carrier's
// API to place a call (URL, headers, body) hold no contact variable and no voicemail text, only an
// opaque reference, which the server resolves back to the whole context from its store.
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboundContexts } from '../../src/call/outbound/outbound-context.js';
import { buildCallPlacers } from '../../src/carriers/index.js';
import { loadConfig } from '../../src/carriers/load-config.js';
import { composeOriginator } from '../../src/outbound/originator.js';
import { type SimulatedCarrierApi, startSimulatedCarrierApi } from '../../src/sim/carrier-api/server.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/store.js';
import { DialPolicy } from '../../src/trust/dial-policy.js';
import { MINIMAL_PROJECT } from '../config/project.js';

const SECRET_NAME = 'Zelda-Quux-7731';
const SECRET_NOTE = 'owes 4242.17 on invoice QX-99';
const VOICEMAIL = `Hello ${SECRET_NAME}, please call us back.`;

interface Seen {
  method: string;
  url: string;
  headers: string;
  body: string;
}

let sim: SimulatedCarrierApi;
let proxy: Server;
let proxyUrl: string;
let store: Store;
let dir: string;
const seen: Seen[] = [];

beforeAll(async () => {
  sim = await startSimulatedCarrierApi();
  // Records every request on its way to the simulated carrier API, whole, then passes it on.
  proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: JSON.stringify(req.headers),
        body: body.toString('utf8'),
      });
      const target = new URL(req.url ?? '/', sim.url);
      const forward = httpRequest(target, { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  dir = mkdtempSync(join(tmpdir(), 'callbridge-context-'));
  store = openSqliteStore({ file: join(dir, 'callbridge.db') });
});

afterAll(async () => {
  await store?.close();
  await new Promise<void>((resolve) => proxy?.close(() => resolve()));
  await sim?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const config = () => loadConfig({}, { cwd: MINIMAL_PROJECT });
const CARRIERS = ['twilio', 'telnyx', 'plivo', 'vonage', 'exotel'];

describe('placing an outbound call', () => {
  it('offers every carrier on the simulated API', () => {
    expect(buildCallPlacers(config(), { simulatedApiUrl: proxyUrl }).map((p) => p.carrier)).toEqual(CARRIERS);
  });

  it.each(CARRIERS)('through %s sends the carrier no contact variable, only a reference', async (carrier) => {
    const cfg = config();
    const contexts = outboundContexts(cfg.streamTokenSecret, store);
    const calls = composeOriginator(
      buildCallPlacers(cfg, { simulatedApiUrl: proxyUrl }),
      contexts,
      new DialPolicy(),
    );
    const detects = !calls.carriersWithoutMachineDetection.includes(carrier);
    const amd = detects
      ? { mode: 'voicemail' as const, voicemailText: VOICEMAIL, voicemailAudioUrl: null }
      : null;
    const before = seen.length;
    const placed = await calls.place({
      to: '+12125550100',
      from: null,
      carrier,
      profile: 'default',
      variables: { name: SECRET_NAME, note: SECRET_NOTE },
      amd,
      recording: null,
      attemptId: 'cmp_ctx.1.1',
      campaignId: 'cmp_ctx',
      contact: 1,
    });
    expect(placed.carrier).toBe(carrier);

    const sent = seen.slice(before);
    expect(sent.length).toBeGreaterThan(0);
    const everything = sent.map((r) => `${r.method} ${r.url}\n${r.headers}\n${r.body}`).join('\n');
    // Form bodies and URLs escape what they carry, and Telnyx's client_state is base64: the test
    // looks for the values in every decoding too.
    const unescaped = everything + decodeURIComponent(everything.replace(/\+/g, ' '));
    const base64 = (unescaped.match(/[A-Za-z0-9+/_-]{16,}={0,2}/g) ?? []).map((run) =>
      Buffer.from(run, 'base64').toString('utf8'),
    );
    const decoded = [unescaped, ...base64].join('\n');
    for (const value of [SECRET_NAME, SECRET_NOTE, 'QX-99', 'cmp_ctx']) {
      expect(decoded).not.toContain(value);
    }
    // What did travel is a reference the server resolves to the whole context, for this carrier only.
    const ref = /r1\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{22}/.exec(decoded)?.[0];
    expect(ref).toBeDefined();
    const context = await contexts.resolve(ref, carrier);
    expect(context).toMatchObject({
      attemptId: 'cmp_ctx.1.1',
      variables: { name: SECRET_NAME, note: SECRET_NOTE },
      ...(amd ? { amd } : {}),
    });
    const other = CARRIERS.find((name) => name !== carrier)!;
    expect(await contexts.resolve(ref, other)).toBeNull();
  });
});
