// The further agent protocol over real sockets (docs/protocols/agent.md sections 8 to 10): a
// redialed agent is told which functions already ran, a function may switch the voice mid-call and
// the answer waits for the agent's acknowledgement, and `LatencyReport` reaches the metrics and the
// call's record. A `ws` client plays Twilio, a scripted fake agent plays the voice agent, and a
// local HTTP server plays the profile's functions.
import { createServer, type Server } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeConfigDir } from '../../helpers/config-dir.js';
import { type AgentConnection, type FakeAgent, startFakeAgent } from '../../helpers/fake-agent.js';
import { startServer, type TestServer } from '../../helpers/server.js';
import { newCallSid, openMediaStream, voiceWebhook } from '../../helpers/twilio-carrier.js';

const SPANISH_VOICE = { provider: { type: 'speech', version: 'v2', model: 'turn-luna-es' } };
/** The profile's speak fallback chain: a turn- voice first, a lyric- voice (v1 by default) after. */
const SPEAK_CHAIN = [
  { provider: { type: 'speech', version: 'v2', model: 'turn-kit-en' } },
  { provider: { type: 'speech', model: 'lyric-2-thalia-en', speed: 1.1 } },
];

let agent: FakeAgent;
let server: TestServer;
let hook: Server;
let hookUrl = '';

beforeEach(async () => {
  agent = await startFakeAgent();
  // /lookup answers an order's status; /language asks for the Spanish voice.
  hook = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          req.url === '/language'
            ? { ok: true, language: 'es', update: { speak: SPANISH_VOICE } }
            : { status: 'shipped' },
        ),
      );
    });
  });
  await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(hook.address() as { port: number }).port}`;
  const configDir = writeConfigDir({
    default: {
      prompt: 'You are a test agent.',
      greeting: 'Hello from the test.',
      think: { provider: { type: 'open_ai', model: 'gpt-4o-mini' } },
      speak: SPEAK_CHAIN,
      endCall: true,
      limits: { silencePromptMs: 0, silenceHangupMs: 0, maxCallMs: 0 },
      functions: [
        {
          name: 'lookup_order',
          description: 'Look up an order.',
          parameters: { type: 'object', properties: { order: { type: 'string' } } },
          url: `${hookUrl}/lookup`,
          timeoutMs: 2000,
        },
        {
          name: 'set_language',
          description: 'Switch the conversation to another language.',
          parameters: { type: 'object', properties: { language: { type: 'string' } } },
          url: `${hookUrl}/language`,
          timeoutMs: 2000,
          mayUpdate: ['speak'],
        },
      ],
    },
  });
  server = await startServer({ AGENT_URL: agent.url, AGENT_API_KEY: 'key', CONFIG_DIR: configDir });
});

afterEach(async () => {
  await server.close();
  await agent.close();
  hook.closeAllConnections();
  await new Promise<void>((resolve) => hook.close(() => resolve()));
});

async function placeCall() {
  const callSid = newCallSid();
  const answer = await voiceWebhook(server.baseUrl, { CallSid: callSid, From: '+15005550006', To: '+1555' });
  const carrier = await openMediaStream(answer.streamUrl, { callSid });
  carrier.start(answer.parameters);
  const conn = await agent.nextConnection();
  await conn.waitFor('Settings');
  conn.send({ type: 'SettingsApplied' });
  return { callSid, carrier, conn, settings: conn.messages[0]! };
}

function answerTo(conn: AgentConnection, id: string): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    const check = () => {
      const found = conn.messages.find((m) => m.type === 'FunctionCallResponse' && m.id === id);
      if (found) resolve(found);
      else setTimeout(check, 5);
    };
    check();
  });
}

async function metricValue(name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('Settings', () => {
  it("sends the profile's speak fallback list intact, in order", async () => {
    const { carrier, settings } = await placeCall();
    expect(settings.type).toBe('Settings');
    // Intact: both entries, in order, each provider as written; the v1 default is made explicit.
    expect((settings.agent as { speak?: unknown }).speak).toEqual([
      SPEAK_CHAIN[0],
      { provider: { ...SPEAK_CHAIN[1]!.provider, version: 'v1' } },
    ]);
    carrier.stop();
    await carrier.closed;
  });
});

describe('History on a redial', () => {
  it('tells a redialed agent which functions already ran, with their answers and thought signatures', async () => {
    const { callSid, carrier, conn: first } = await placeCall();
    first.send({ type: 'ConversationText', role: 'user', content: 'Where is order 42?' });
    first.send({
      type: 'FunctionCallRequest',
      functions: [
        {
          id: 'fc_lookup_1',
          name: 'lookup_order',
          arguments: '{"order":"42"}',
          client_side: true,
          thought_signature: 'sig-opaque-123',
        },
      ],
    });
    await answerTo(first, 'fc_lookup_1');
    first.socket.terminate(); // dropped mid-call, no Error: the bridge redials

    const second = await agent.nextConnection();
    const settings = await second.waitFor('Settings');
    const context = (settings.agent as { context?: { messages: unknown[] } }).context;
    expect(context?.messages).toEqual([
      { type: 'History', role: 'user', content: 'Where is order 42?' },
      {
        type: 'History',
        function_calls: [
          {
            id: 'fc_lookup_1',
            name: 'lookup_order',
            client_side: true,
            arguments: '{"order":"42"}',
            response: '{"status":"shipped"}',
            thought_signature: 'sig-opaque-123',
          },
        ],
      },
    ]);
    second.send({ type: 'SettingsApplied' });
    carrier.stop();
    await carrier.closed;
    await until(async () => (await server.store.getCallRecord(callSid)) !== null);
    const record = await server.store.getCallRecord(callSid);
    expect(record?.functionCalls[0]).toMatchObject({
      id: 'fc_lookup_1',
      name: 'lookup_order',
      response: '{"status":"shipped"}',
      thoughtSignature: 'sig-opaque-123',
    });
  });
});

describe('updates asked for by a function', () => {
  it('sends UpdateSpeak, answers the function only after SpeakUpdated, and redials with the new voice', async () => {
    const { carrier, conn: first } = await placeCall();
    first.send({
      type: 'FunctionCallRequest',
      functions: [{ id: 'fc_lang', name: 'set_language', arguments: '{"language":"es"}', client_side: true }],
    });
    const update = await first.waitFor('UpdateSpeak');
    expect(update).toEqual({ type: 'UpdateSpeak', speak: SPANISH_VOICE });
    // No answer while the update waits for its acknowledgement.
    expect(first.messages.some((m) => m.type === 'FunctionCallResponse')).toBe(false);
    first.send({ type: 'SpeakUpdated' });
    const answer = await answerTo(first, 'fc_lang');
    expect(JSON.parse(String(answer.content))).toEqual({ ok: true, language: 'es' });
    const order = first.messages.map((m) => m.type);
    expect(order.indexOf('UpdateSpeak')).toBeLessThan(order.indexOf('FunctionCallResponse'));
    expect(await metricValue('callbridge_agent_updates_total', 'outcome="applied"')).toBe(1);

    // A redialed agent speaks with the voice the call switched to, not the profile's.
    first.socket.terminate();
    const second = await agent.nextConnection();
    const settings = await second.waitFor('Settings');
    expect((settings.agent as { speak?: unknown }).speak).toEqual(SPANISH_VOICE);
    carrier.stop();
    await carrier.closed;
  });
});

describe('an update the agent dropped before acknowledging', () => {
  it('counts as applied once the redialed agent applied Settings carrying it, and the function is answered', async () => {
    const { carrier, conn: first } = await placeCall();
    first.send({
      type: 'FunctionCallRequest',
      functions: [{ id: 'fc_lang', name: 'set_language', arguments: '{"language":"es"}', client_side: true }],
    });
    await first.waitFor('UpdateSpeak');
    first.socket.terminate(); // gone before SpeakUpdated

    const second = await agent.nextConnection();
    const settings = await second.waitFor('Settings');
    expect((settings.agent as { speak?: unknown }).speak).toEqual(SPANISH_VOICE);
    second.send({ type: 'SettingsApplied' });
    const answer = await answerTo(second, 'fc_lang');
    expect(JSON.parse(String(answer.content))).toEqual({ ok: true, language: 'es' });
    expect(await metricValue('callbridge_agent_updates_total', 'outcome="applied"')).toBe(1);
    expect(await metricValue('callbridge_agent_updates_total', 'outcome="timeout"')).toBe(0);
    carrier.stop();
    await carrier.closed;
  });
});

describe('LatencyReport', () => {
  it('feeds the turn latency metrics and the call record', async () => {
    const { callSid, carrier, conn } = await placeCall();
    conn.send({
      type: 'LatencyReport',
      stt_latency: 0.12,
      ttt_token_latency: 0.34,
      ttt_text_latency: 0.5,
      tts_latency: 0.2,
      total_latency: 0.66,
    });
    // An odd report is tolerated: its bad figures are left out, the call goes on.
    conn.send({ type: 'LatencyReport', stt_latency: 'fast', total_latency: -1, tts_latency: 0.25 });
    await until(
      async () => (await metricValue('callbridge_agent_turn_latency_seconds_count', 'kind="tts"')) === 2,
    );
    expect(await metricValue('callbridge_agent_turn_latency_seconds_count', 'kind="stt"')).toBe(1);
    expect(await metricValue('callbridge_agent_turn_latency_seconds_sum', 'kind="thinking"')).toBeCloseTo(
      0.34,
    );
    carrier.stop();
    await carrier.closed;
    await until(async () => (await server.store.getCallRecord(callSid)) !== null);
    const turns = (await server.store.getCallRecord(callSid))?.latency.agentTurns;
    expect(turns?.map(({ atMs: _, ...figures }) => figures)).toEqual([
      { sttMs: 120, thinkingMs: 340, thinkingTextMs: 500, ttsMs: 200, totalMs: 660 },
      { ttsMs: 250 },
    ]);
  });
});

async function until(predicate: () => Promise<boolean>): Promise<void> {
  while (!(await predicate())) await new Promise((r) => setTimeout(r, 10));
}
