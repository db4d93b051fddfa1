import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createTcpServer, type Socket, type Server as TcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type DoctorIo, doctorCommand } from '../../src/doctor/command.js';
import { runDoctor } from '../../src/doctor/doctor.js';
import { exitCodeOf, formatLine } from '../../src/doctor/report.js';
import { type LocalAgent, type LocalAgentOptions, startLocalAgent } from '../../src/sim/agent/server.js';
import { freePort } from '../helpers/free-port.js';
import { REDIS_URL, redisAvailable } from '../helpers/redis.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const AGENT_KEY = 'agent-key-secret-0123456789';
const TWILIO_SID = `AC${'0123456789abcdef'.repeat(2)}`;
const TWILIO_TOKEN = 'supersecretvalue';
const ADMIN_TOKEN = 'admin-token-secret-0123456789';
const WEBHOOK_SECRETS = ['webhook-secret-old-1', 'webhook-secret-new-2'];
const TIMEOUT_MS = 1000;

const closers: Array<() => Promise<unknown>> = [];
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'callbridge-doctor-'));
});

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await rm(dir, { recursive: true, force: true });
});

async function localAgent(opts: LocalAgentOptions = {}): Promise<LocalAgent> {
  const agent = await startLocalAgent({ apiKeys: [AGENT_KEY], ...opts });
  closers.push(() => agent.close());
  return agent;
}

async function listen<S extends HttpServer | TcpServer>(server: S): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  closers.push(() => {
    if ('closeAllConnections' in server) server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return (server.address() as { port: number }).port;
}

/** Twilio's REST API, the one request doctor makes: the account record, behind Basic auth. */
async function fakeTwilio(): Promise<{ url: string; requests: string[] }> {
  const requests: string[] = [];
  const server = createHttpServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const expected = `Basic ${Buffer.from(`${TWILIO_SID}:${TWILIO_TOKEN}`).toString('base64')}`;
    const json = (status: number, body: object) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.headers.authorization !== expected) return json(401, { code: 20003, message: 'Authenticate' });
    if (req.url !== `/2010-04-01/Accounts/${TWILIO_SID}.json`) return json(404, { code: 20404 });
    json(200, { sid: TWILIO_SID, status: 'active', friendly_name: 'Test' });
  });
  return { url: `http://127.0.0.1:${await listen(server)}`, requests };
}

/** Accepts TCP connections and never says a word: what a black-holed host looks like. */
async function silentHost(): Promise<number> {
  const sockets: Socket[] = [];
  const port = await listen(createTcpServer((socket) => sockets.push(socket)));
  // Closers run last-first: these sockets go before the server waits for them.
  closers.push(async () => {
    for (const socket of sockets) socket.destroy();
  });
  return port;
}

const redisUp = await redisAvailable();
if (!redisUp) console.log(`doctor: the Redis case is skipped: no Redis answers PING at ${REDIS_URL}`);

/** Runs doctor against the shipped config folder with only the given settings. */
async function doctor(env: Record<string, string>) {
  const lines = await runDoctor(
    { DATA_DIR: join(dir, 'data'), ...env },
    { cwd: ROOT, timeoutMs: TIMEOUT_MS },
  );
  const text = lines.map(formatLine);
  return { lines, text, output: text.join('\n'), exitCode: exitCodeOf(lines) };
}

function expectNoSecrets(output: string): void {
  for (const secret of [AGENT_KEY, TWILIO_TOKEN, ADMIN_TOKEN, ...WEBHOOK_SECRETS, 'redis-password-x']) {
    expect(output).not.toContain(secret);
  }
}

describe('callbridge doctor', () => {
  it('with nothing configured: the built-in local agent, a warning for Twilio, exit 0', async () => {
    const { text, exitCode } = await doctor({});
    expect(exitCode).toBe(0);
    expect(text[0]).toMatch(/^ok {3}configuration loads \(region global, 4 agent profiles in .*config\)$/);
    expect(text).toContain('ok   voice agent: no AGENT_URL, so calls use the built-in local voice agent');
    expect(text).toContainEqual(
      expect.stringMatching(/^warn TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN are not set/),
    );
    // No token yet: the server makes one at its first start; the admin API is not "off".
    expect(text).toContain(
      `ok   ADMIN_TOKEN is not set: the server creates ${join(dir, 'data', 'admin-token')} at its first start and uses it`,
    );
    expect(text.filter((line) => /ADMIN_TOKEN/.test(line))).toHaveLength(1);
    expect(text).toContainEqual(
      expect.stringMatching(/^ok {3}webhook secrets: none configured \(tasks, inbox, /),
    );
    expect(text).toContainEqual(
      expect.stringMatching(/^ok {3}state: embedded SQLite in .*data \(REDIS_URL not set\)$/),
    );
    for (const line of text) expect(line).toMatch(/^(ok {3}|warn |FAIL )\S/);
  });

  it('with every host configured and answering: all ok, exit 0, and no secret printed', async () => {
    const agent = await localAgent();
    const twilio = await fakeTwilio();
    const gatewayPort = await listen(createTcpServer((socket) => socket.destroy()));
    const { text, output, exitCode } = await doctor({
      AGENT_URL: agent.url,
      AGENT_API_KEY: AGENT_KEY,
      SPEECH_API_URL: agent.httpUrl,
      TWILIO_ACCOUNT_SID: TWILIO_SID,
      TWILIO_AUTH_TOKEN: TWILIO_TOKEN,
      TWILIO_API_URL: twilio.url,
      ADMIN_TOKEN,
      WEBHOOK_SECRET_TASKS: WEBHOOK_SECRETS.join(','),
      WEBHOOK_SECRET_PAYMENTS: WEBHOOK_SECRETS[0]!,
      OPERATOR_GATEWAY_URL: `http://127.0.0.1:${gatewayPort}/events?token=not-for-print`,
      OPERATOR_GATEWAY_SECRET: 'gateway-secret-0123456789',
    });
    expect(output).not.toMatch(/^(warn|FAIL)/m);
    expect(exitCode).toBe(0);
    expect(text).toEqual([
      expect.stringMatching(/^ok {3}configuration loads/),
      'ok   AGENT_API_KEY is set (sent as Authorization: Token)',
      `ok   voice agent ${agent.url}/v1/agent/converse: handshake accepted (101)`,
      expect.stringMatching(
        /^ok {3}speech API http:\/\/127\.0\.0\.1:\d+: answers \(HTTP 200, \d+ think models\)$/,
      ),
      'ok   TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN are set: carrier requests are verified',
      `ok   Twilio API ${twilio.url}, account ${TWILIO_SID}: credentials accepted (account active)`,
      'ok   ADMIN_TOKEN is set: the /v1 admin API uses it',
      'ok   webhook secrets: configured for tasks (2 secrets), payments (1 secret); ' +
        'not configured: inbox, inbox_rules, deploy, code (they reject every request)',
      expect.stringMatching(/^ok {3}state: embedded SQLite/),
      `ok   operator gateway http://127.0.0.1:${gatewayPort}/events: TCP connect to 127.0.0.1:${gatewayPort} succeeded`,
      `ok   think models: every profile's model is listed by ${agent.httpUrl}/v1/agent/settings/think/models (4 listed)`,
      'ok   listen and speak models follow the family rules (listen std- or turn-; speak lyric- on v1, turn- on v2)',
    ]);
    expect(twilio.requests).toEqual([`GET /2010-04-01/Accounts/${TWILIO_SID}.json`]);
    expect(output).not.toContain('not-for-print');
    expect(output).not.toContain('gateway-secret-0123456789');
    expectNoSecrets(output);
    // The probe's agent socket is closed again.
    await expect.poll(() => agent.connections()).toBe(0);
  });

  it("passes with the README's `callbridge sim` recipe: the speech API is the sim's, not the region's", async () => {
    // Regression: doctor failed on the region's speech host though calls never use it with the sim.
    const agent = await localAgent({ apiKeys: [] });
    const { text, output, exitCode } = await doctor({ AGENT_URL: agent.url, AGENT_API_KEY: 'anything' });
    expect(output).not.toMatch(/^FAIL/m);
    expect(exitCode).toBe(0);
    expect(text).toContainEqual(
      expect.stringMatching(new RegExp(`^ok {3}speech API ${agent.httpUrl}: answers \\(HTTP 200`)),
    );
  });

  it('fails on a rejected agent key (401) and a rejected Twilio token, exit 1, secrets unprinted', async () => {
    const agent = await localAgent({ apiKeys: ['the-only-good-key'] });
    const twilio = await fakeTwilio();
    const { text, output, exitCode } = await doctor({
      AGENT_URL: agent.url,
      AGENT_API_KEY: AGENT_KEY,
      SPEECH_API_URL: agent.httpUrl,
      TWILIO_ACCOUNT_SID: TWILIO_SID,
      TWILIO_AUTH_TOKEN: 'not-the-token-0123',
      TWILIO_API_URL: twilio.url,
    });
    expect(exitCode).toBe(1);
    expect(text).toContain(
      `FAIL voice agent ${agent.url}/v1/agent/converse: credentials rejected (HTTP 401): check AGENT_API_KEY`,
    );
    expect(text).toContain(
      `FAIL speech API ${agent.httpUrl}: credentials rejected (HTTP 401): check AGENT_API_KEY`,
    );
    expect(text).toContain(
      `FAIL Twilio API ${twilio.url}, account ${TWILIO_SID}: credentials rejected (HTTP 401): ` +
        'check TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN',
    );
    expectNoSecrets(output);
    expect(output).not.toContain('not-the-token-0123');
  });

  it('warns, without failing, when the agent is at capacity (429)', async () => {
    const agent = await localAgent({ maxConnections: 0 });
    const { text, exitCode } = await doctor({
      AGENT_URL: agent.url,
      AGENT_API_KEY: AGENT_KEY,
      SPEECH_API_URL: agent.httpUrl,
    });
    expect(text).toContain(
      `warn voice agent ${agent.url}/v1/agent/converse: at capacity (HTTP 429), too many concurrent sessions right now`,
    );
    expect(exitCode).toBe(0);
  });

  it('with AGENT_AUTH=grant, mints a grant and handshakes with it', async () => {
    const agent = await localAgent();
    const { text, exitCode } = await doctor({
      AGENT_URL: agent.url,
      AGENT_API_KEY: AGENT_KEY,
      AGENT_AUTH: 'grant',
      SPEECH_API_URL: agent.httpUrl,
    });
    expect(text).toContain('ok   AGENT_API_KEY is set (minting a grant per call)');
    expect(text).toContain(`ok   voice agent ${agent.url}/v1/agent/converse: handshake accepted (101)`);
    expect(exitCode).toBe(0);
  });

  it('fails each unreachable host within its timeout: refused, and silent', async () => {
    const refused = await freePort();
    const silent = await silentHost();
    const started = performance.now();
    const { text, output, exitCode } = await doctor({
      AGENT_URL: `ws://127.0.0.1:${silent}`,
      AGENT_API_KEY: AGENT_KEY,
      SPEECH_API_URL: `http://127.0.0.1:${silent}`,
      TWILIO_ACCOUNT_SID: TWILIO_SID,
      TWILIO_AUTH_TOKEN: TWILIO_TOKEN,
      TWILIO_API_URL: `http://127.0.0.1:${refused}`,
      REDIS_URL: `redis://:redis-password-x@127.0.0.1:${refused}`,
      OPERATOR_GATEWAY_URL: `http://127.0.0.1:${refused}/events`,
    });
    // The checks run side by side, each bounded by its timeout.
    expect(performance.now() - started).toBeLessThan(TIMEOUT_MS * 3);
    expect(exitCode).toBe(1);
    // One silent host behind the agent, the speech API and the model listing: one line.
    expect(text).toContain(
      `FAIL 127.0.0.1:${silent} (voice agent, speech API, think models): no answer within ${TIMEOUT_MS} ms`,
    );
    expect(text.filter((line) => line.includes(`:${silent}`))).toHaveLength(1);
    expect(text).toContain(
      `FAIL Twilio API http://127.0.0.1:${refused}, account ${TWILIO_SID}: ECONNREFUSED`,
    );
    expect(text).toContain(`FAIL Redis redis://:***@127.0.0.1:${refused}: ECONNREFUSED`);
    expect(text).toContain(
      `FAIL operator gateway http://127.0.0.1:${refused}/events: TCP connect to 127.0.0.1:${refused} failed: ECONNREFUSED`,
    );
    expect(text).toContain(
      'warn OPERATOR_GATEWAY_SECRET is not set: events go to the operator gateway unsigned',
    );
    expectNoSecrets(output);
  });

  it('fails a Redis host that accepts the connection and never answers', async () => {
    const silent = await silentHost();
    const { text, exitCode } = await doctor({ REDIS_URL: `redis://127.0.0.1:${silent}` });
    expect(text).toContain(`FAIL Redis redis://127.0.0.1:${silent}: no answer within ${TIMEOUT_MS} ms`);
    expect(exitCode).toBe(1);
  });

  it.skipIf(!redisUp)('reports Redis answering PING', async () => {
    const { text, exitCode } = await doctor({ REDIS_URL });
    expect(text).toContain(`ok   Redis ${REDIS_URL}: answers PING`);
    expect(exitCode).toBe(0);
  });

  it('stops at a configuration that does not load: one FAIL line naming the variable, no secret', async () => {
    const { text, output, exitCode } = await doctor({ TWILIO_AUTH_TOKEN: TWILIO_TOKEN });
    expect(text).toEqual(['FAIL configuration: TWILIO_ACCOUNT_SID: required when TWILIO_AUTH_TOKEN is set']);
    expect(exitCode).toBe(1);
    expectNoSecrets(output);
  });

  it('fails on a secrets file that does not parse, naming the file and never its values', async () => {
    const file = join(dir, 'secrets.json');
    await writeFile(file, JSON.stringify({ tasks: [WEBHOOK_SECRETS[0]], bogus: [WEBHOOK_SECRETS[1]] }));
    const { text, output, exitCode } = await doctor({ SECRETS_FILE: file });
    expect(exitCode).toBe(1);
    expect(text).toContainEqual(
      expect.stringMatching(/^FAIL SECRETS_FILE: .*secrets\.json: unknown field "bogus"/),
    );
    expectNoSecrets(output);
  });
});

describe('callbridge doctor, the command', () => {
  function captureIo(env: Record<string, string>): { io: DoctorIo; out: () => string; err: () => string } {
    const out: string[] = [];
    const err: string[] = [];
    const io: DoctorIo = {
      stdout: (t) => out.push(t),
      stderr: (t) => err.push(t),
      env: { DATA_DIR: join(dir, 'data'), ...env },
      cwd: ROOT,
    };
    return { io, out: () => out.join(''), err: () => err.join('') };
  }

  it('prints one line per check and exits 0 when nothing failed', async () => {
    const { io, out, err } = captureIo({});
    expect(await doctorCommand([], io)).toBe(0);
    expect(err()).toBe('');
    expect(out()).toMatch(/^ok {3}configuration loads/);
    expect(out().endsWith('\n')).toBe(true);
  });

  it('exits 1 when a check failed', async () => {
    const { io, out } = captureIo({ PORT: 'abc' });
    expect(await doctorCommand(['--timeout-ms', '500'], io)).toBe(1);
    expect(out()).toBe('FAIL configuration: PORT: must be an integer from 0 to 65535, got "abc"\n');
  });

  it.each([
    [['--bogus'], /Unknown option '--bogus'/],
    [['--timeout-ms', 'soon'], /--timeout-ms must be a whole number of milliseconds, got "soon"/],
    [['extra'], /Unexpected argument 'extra'/],
  ])('exits 2 on %j', async (args, message) => {
    const { io, err } = captureIo({});
    expect(await doctorCommand(args, io)).toBe(2);
    expect(err()).toMatch(message);
  });
});
