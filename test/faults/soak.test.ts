// Calls leave nothing behind: after two thousand short calls (ended by the caller's stop, by the
// agent's end_call, or by the carrier socket dropping), no registry entry, pre-warmed session,
// event subscriber, socket, timer or heap growth remains.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import v8 from 'node:v8';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { newCallSid, openMediaStream } from '../helpers/twilio-carrier.js';
import { type SoakAgent, type SoakAgentCall, startSoakAgent } from './soak-agent.js';

const CALLS = 2000;
const WARM_UP_CALLS = 100;
const CONCURRENCY = 50;
const FRAME_BYTES = 160;
/**
 * Heap growth allowed over the soak, after GC. What a finished call may leave is a few counters in
 * prom-client (bounded labels) and nothing else; 2,000 calls each leaking as little as 15 KB (one
 * session with its buffers, a closure over a socket) would pass it.
 */
const HEAP_GROWTH_BOUND_BYTES = 30 * 1024 * 1024;
const SETTLE_LIMIT_MS = 10_000;
/** A call takes a fraction of a second; one that takes this long is stuck. */
const CALL_LIMIT_MS = 20_000;

/** How calls end, in turn: mostly the caller's stop, some the agent's end_call, some a dropped socket. */
const ENDINGS = ['caller_stop', 'caller_stop', 'caller_stop', 'agent_end_call', 'carrier_drop'] as const;

let agent: SoakAgent;
let server: TestServer;

beforeAll(async () => {
  agent = await startSoakAgent();
  server = await startServer({
    AGENT_URL: agent.url,
    AGENT_API_KEY: 'soak-agent-key-0123456789',
    ADMIN_TOKEN: SOAK_ADMIN_TOKEN,
  });
});

afterAll(async () => {
  await server?.close();
  await agent?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One HTTP exchange on its own connection (no keep-alive), so no idle socket outlives it. */
function request(
  method: string,
  path: string,
  opts: { body?: string; headers?: Record<string, string> } = {},
): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${server.baseUrl}${path}`, {
      method,
      agent: false,
      headers: { connection: 'close', ...opts.headers },
    });
    req.once('response', resolve);
    req.once('error', reject);
    req.end(opts.body);
  });
}

async function readBody(res: http.IncomingMessage): Promise<string> {
  res.setEncoding('utf8');
  let body = '';
  for await (const chunk of res) body += chunk;
  return body;
}

const SOAK_ADMIN_TOKEN = 'soak-admin-token-0123456789';

interface Answer {
  streamUrl: string;
  token: string;
}

async function voiceWebhook(callSid: string): Promise<Answer> {
  const res = await request('POST', '/carriers/twilio/voice', {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ CallSid: callSid, From: '+15005550006', To: '+15005550001' }).toString(),
  });
  const body = await readBody(res);
  expect(res.statusCode, body).toBe(200);
  return {
    streamUrl: /<Stream url="([^"]+)"/.exec(body)?.[1] ?? '',
    token: /<Parameter name="token" value="([^"]+)"/.exec(body)?.[1] ?? '',
  };
}

/** Subscribes to the call's observer feed; `body` resolves with all it streamed once it ends. */
async function observe(callSid: string, token: string): Promise<{ body: Promise<string> }> {
  const headers = { authorization: `Bearer ${token}` };
  const res = await request('GET', `/calls/${callSid}/events`, { headers });
  expect(res.statusCode).toBe(200);
  // The server subscribed before it sent the headers: the feed will see the call's end.
  return { body: readBody(res) };
}

function frames(count: number): Buffer[] {
  return Array.from({ length: count }, () => randomBytes(FRAME_BYTES));
}

/** A reply as the agent streams it: started, audio, done. */
function reply(call: SoakAgentCall, audio: Buffer[]): void {
  call.socket.send(JSON.stringify({ type: 'AgentStartedSpeaking', total_latency: 0.3 }));
  for (const chunk of audio) call.socket.send(chunk, { binary: true });
  call.socket.send(JSON.stringify({ type: 'AgentAudioDone' }));
}

async function oneCall(index: number): Promise<void> {
  const ending = ENDINGS[index % ENDINGS.length]!;
  const callSid = newCallSid();
  const answer = await voiceWebhook(callSid);
  // Unsigned webhooks get no observer token (docs/security.md): the operator's token follows the call.
  const feed = index % 10 === 0 ? await observe(callSid, SOAK_ADMIN_TOKEN) : null;
  const carrier = await openMediaStream(answer.streamUrl, { callSid });
  carrier.start({ token: answer.token });
  const agentCall = await agent.callFor(callSid);

  // A few frames both ways, byte for byte.
  const up = frames(5);
  for (const frame of up) carrier.media(frame);
  const down = frames(3);
  reply(agentCall, down);
  expect((await agentCall.waitForAudio(up.length * FRAME_BYTES)).equals(Buffer.concat(up))).toBe(true);
  expect((await carrier.waitForAudio(down.length * FRAME_BYTES)).equals(Buffer.concat(down))).toBe(true);

  switch (ending) {
    case 'caller_stop':
      carrier.stop();
      expect(await carrier.closed).toEqual({ code: 1000, reason: 'stream stopped' });
      break;
    case 'agent_end_call': {
      const endCall = { id: `fc-${index}`, name: 'end_call', arguments: '{}', client_side: true };
      agentCall.socket.send(JSON.stringify({ type: 'FunctionCallRequest', functions: [endCall] }));
      await agentCall.waitFor('FunctionCallResponse');
      reply(agentCall, frames(2));
      // The goodbye plays (the carrier echoes its marks), then the server hangs up.
      expect(await carrier.closed).toEqual({ code: 1000, reason: 'call ended' });
      break;
    }
    case 'carrier_drop':
      carrier.ws.terminate();
      await carrier.closed;
      break;
  }
  await agentCall.closed;
  if (feed) expect(await feed.body).toContain(`"type":"end"`);
}

/** `work`, or a clear failure naming what hung when it takes longer than `limitMs`. */
async function within<T>(limitMs: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${limitMs} ms`)), limitMs);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function run(calls: number, offset: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < calls) {
        const index = offset + next++;
        await within(CALL_LIMIT_MS, `call ${index} (${ENDINGS[index % ENDINGS.length]})`, oneCall(index));
      }
    }),
  );
}

function resourceCounts(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const type of process.getActiveResourcesInfo()) counts[type] = (counts[type] ?? 0) + 1;
  return counts;
}

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

function heapAfterGc(): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

/** Polls until `check` passes or the limit is reached; the caller asserts afterwards. */
async function settle(check: () => boolean): Promise<void> {
  const deadline = performance.now() + SETTLE_LIMIT_MS;
  while (!check() && performance.now() < deadline) await sleep(20);
}

describe('soak: many short calls through one server', () => {
  it(`leaves no socket, timer, registry entry or heap behind after ${CALLS} calls`, async () => {
    const { app } = server;
    const state = app.callbridge;
    // Warm-up: lazily created things (JIT, metric series, store statements) exist before the baseline.
    await run(WARM_UP_CALLS, 0);
    await settle(() => app.websocketServer.clients.size === 0);
    const resourcesBefore = resourceCounts();
    const heapBefore = heapAfterGc();
    const openedBefore = agent.opened();

    const started = performance.now();
    await run(CALLS, WARM_UP_CALLS);
    console.log(
      `soak: ${CALLS} calls, ${CONCURRENCY} at a time, in ${Math.round(performance.now() - started)} ms`,
    );

    // One agent session per call, every one closed; nothing left in the server's books.
    expect(agent.opened() - openedBefore).toBe(CALLS);
    expect(agent.closed()).toBe(agent.opened());
    expect(agent.open()).toBe(0);
    expect(state.registry.size).toBe(0);
    expect(state.prewarm.size).toBe(0);
    expect(state.events.subscriberCount).toBe(0);
    await settle(() => app.websocketServer.clients.size === 0);
    expect(app.websocketServer.clients.size).toBe(0);

    // Handles: the same kinds and numbers as before the soak (the test's own servers included in both).
    await settle(() => JSON.stringify(resourceCounts()) === JSON.stringify(resourcesBefore));
    expect(resourceCounts()).toEqual(resourcesBefore);

    const heapAfter = heapAfterGc();
    console.log(
      `soak: heap ${(heapBefore / 1024 / 1024).toFixed(1)} MiB before, ${(heapAfter / 1024 / 1024).toFixed(1)} MiB ` +
        `after (bound +${HEAP_GROWTH_BOUND_BYTES / 1024 / 1024} MiB)`,
    );
    expect(heapAfter - heapBefore).toBeLessThan(HEAP_GROWTH_BOUND_BYTES);
  }, 180_000);
});
