// doctor checks every configured carrier's credentials with one signed request that changes
// nothing, against fake carrier APIs the test scripts: accepted credentials pass, refused ones fail
// naming the variables to check, and an unreachable host (port 9 included) is one line, never
// "bad port". No secret is printed.
import { generateKeyPairSync } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importSPKI, jwtVerify } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runDoctor } from '../../src/doctor/doctor.js';
import { exitCodeOf, formatLine } from '../../src/doctor/report.js';
import { ensureAdminToken } from '../../src/admin/token-file.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const TIMEOUT_MS = 1000;
const TELNYX_KEY = 'KEYtelnyx-secret-0123456789';
const PLIVO_ID = 'MAPLIVOID0123456789';
const PLIVO_TOKEN = 'plivo-token-secret-0123';
const VONAGE_APP = '11111111-2222-3333-4444-555555555555';
const EXOTEL_SID = 'exampleco1';
const EXOTEL_KEY = 'exotel-key-0123';
const EXOTEL_TOKEN = 'exotel-token-secret-0123';
const vonageKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
const VONAGE_PEM = vonageKeys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const VONAGE_PUBLIC = vonageKeys.publicKey.export({ type: 'spki', format: 'pem' }).toString();
const otherKey = generateKeyPairSync('rsa', { modulusLength: 2048 })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();

const servers: Server[] = [];
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'callbridge-doctor-carriers-'));
});
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  await rm(dir, { recursive: true, force: true });
});

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** One carrier's API: `accepts` decides on the request; every request is kept. */
async function fakeApi(accepts: (req: IncomingMessage) => Promise<boolean> | boolean) {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    void Promise.resolve(accepts(req)).then((good) => {
      res.writeHead(good ? 200 : 401, { 'content-type': 'application/json' });
      res.end(JSON.stringify(good ? { ok: true } : { error: 'unauthorized' }));
    });
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, requests };
}

async function vonageAccepts(req: IncomingMessage): Promise<boolean> {
  const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
  if (!token || !req.url?.startsWith('/v1/calls')) return false;
  try {
    const { payload } = await jwtVerify(token, await importSPKI(VONAGE_PUBLIC, 'RS256'));
    return payload.application_id === VONAGE_APP;
  } catch {
    return false;
  }
}

async function doctor(env: Record<string, string>) {
  const lines = await runDoctor(
    { DATA_DIR: join(dir, 'data'), ...env },
    { cwd: ROOT, timeoutMs: TIMEOUT_MS },
  );
  const text = lines.map(formatLine);
  return { text, output: text.join('\n'), exitCode: exitCodeOf(lines) };
}

async function allCarriers(good: boolean) {
  const telnyx = await fakeApi(
    (req) => req.url === '/v2/balance' && req.headers.authorization === `Bearer ${TELNYX_KEY}`,
  );
  const plivo = await fakeApi(
    (req) =>
      req.url === `/v1/Account/${PLIVO_ID}/` && req.headers.authorization === basic(PLIVO_ID, PLIVO_TOKEN),
  );
  const vonage = await fakeApi(vonageAccepts);
  const exotel = await fakeApi(
    (req) =>
      req.url === `/v1/Accounts/${EXOTEL_SID}` &&
      req.headers.authorization === basic(EXOTEL_KEY, EXOTEL_TOKEN),
  );
  const env = {
    TELNYX_API_KEY: good ? TELNYX_KEY : 'KEYwrong-0123456789',
    TELNYX_API_URL: telnyx.url,
    PLIVO_AUTH_ID: PLIVO_ID,
    PLIVO_AUTH_TOKEN: good ? PLIVO_TOKEN : 'wrong-plivo-token',
    PLIVO_API_URL: plivo.url,
    VONAGE_APPLICATION_ID: VONAGE_APP,
    VONAGE_PRIVATE_KEY: good ? VONAGE_PEM : otherKey,
    VONAGE_API_URL: vonage.url,
    EXOTEL_ACCOUNT_SID: EXOTEL_SID,
    EXOTEL_API_KEY: EXOTEL_KEY,
    EXOTEL_API_TOKEN: good ? EXOTEL_TOKEN : 'wrong-exotel-token',
    EXOTEL_API_URL: exotel.url,
  };
  return { env, telnyx, plivo, vonage, exotel };
}

describe('doctor and the carriers', () => {
  it('accepts every configured carrier whose API accepts its signed no-op request', async () => {
    const { env, telnyx, plivo, vonage, exotel } = await allCarriers(true);
    const { text, output, exitCode } = await doctor(env);
    expect(output).not.toMatch(/^FAIL/m);
    expect(exitCode).toBe(0);
    expect(text).toContain(`ok   Telnyx API ${telnyx.url}: credentials accepted`);
    expect(text).toContain(`ok   Plivo API ${plivo.url}: credentials accepted`);
    expect(text).toContain(`ok   Vonage API ${vonage.url}: credentials accepted`);
    expect(text).toContain(`ok   Exotel API ${exotel.url}: credentials accepted`);
    expect(telnyx.requests).toEqual(['GET /v2/balance']);
    expect(plivo.requests).toEqual([`GET /v1/Account/${PLIVO_ID}/`]);
    expect(vonage.requests).toEqual(['GET /v1/calls?page_size=1']);
    expect(exotel.requests).toEqual([`GET /v1/Accounts/${EXOTEL_SID}`]);
  });

  it('fails each carrier whose credentials are refused, naming what to check and printing no secret', async () => {
    const { env, telnyx, plivo, vonage, exotel } = await allCarriers(false);
    const { text, output, exitCode } = await doctor(env);
    expect(exitCode).toBe(1);
    expect(text).toContain(
      `FAIL Telnyx API ${telnyx.url}: credentials rejected (HTTP 401): check TELNYX_API_KEY`,
    );
    expect(text).toContain(
      `FAIL Plivo API ${plivo.url}: credentials rejected (HTTP 401): check PLIVO_AUTH_ID and PLIVO_AUTH_TOKEN`,
    );
    expect(text).toContain(
      `FAIL Vonage API ${vonage.url}: credentials rejected (HTTP 401): check VONAGE_APPLICATION_ID and VONAGE_PRIVATE_KEY`,
    );
    expect(text).toContain(
      `FAIL Exotel API ${exotel.url}: credentials rejected (HTTP 401): ` +
        'check EXOTEL_ACCOUNT_SID, EXOTEL_API_KEY and EXOTEL_API_TOKEN',
    );
    for (const secret of ['wrong-plivo-token', 'wrong-exotel-token', 'KEYwrong', 'PRIVATE KEY']) {
      expect(output).not.toContain(secret);
    }
  });

  it('sends nothing to a carrier without credentials', async () => {
    const { text } = await doctor({});
    expect(text.filter((line) => /Telnyx|Plivo|Vonage|Exotel/.test(line))).toEqual([]);
  });
});

describe('doctor tells each cause once', () => {
  it('says an unreachable host once, port 9 included, and never "bad port"', async () => {
    const { text, output, exitCode } = await doctor({
      AGENT_URL: 'ws://127.0.0.1:9',
      AGENT_API_KEY: 'agent-key-0123456789',
      SPEECH_API_URL: 'http://127.0.0.1:9',
    });
    expect(exitCode).toBe(1);
    expect(output).not.toMatch(/bad port/i);
    expect(text.filter((line) => line.startsWith('FAIL'))).toEqual([
      'FAIL 127.0.0.1:9 (voice agent, speech API, think models): ECONNREFUSED',
    ]);
  });

  it('does not warn about ADMIN_TOKEN when the token file the server made is there', async () => {
    ensureAdminToken(join(dir, 'data'));
    const { text } = await doctor({});
    expect(text.filter((line) => /admin/i.test(line))).toEqual([
      `ok   ADMIN_TOKEN is not set: the server and the CLI use the token in ${join(dir, 'data', 'admin-token')}`,
    ]);
  });
});
