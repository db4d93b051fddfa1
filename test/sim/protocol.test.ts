// The further agent protocol points the local agent follows (docs/protocols/agent.md): fallback
// chains in Settings, History events when asked for, LatencyReport, Update* with their
// acknowledgements, and InjectAgentMessage's behavior.
import { afterEach, describe, expect, it } from 'vitest';
import type { Scenario } from '../../src/sim/agent/scenario.js';
import { type LocalAgent, type LocalAgentOptions, startLocalAgent } from '../../src/sim/agent/server.js';
import { AgentTestClient, makeSettings, sendFrames, silenceMulaw, toneMulaw } from './local-agent-client.js';

let agent: LocalAgent | undefined;
const clients: AgentTestClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await agent?.close();
  agent = undefined;
});

async function start(opts: Partial<LocalAgentOptions> = {}): Promise<LocalAgent> {
  agent = await startLocalAgent({ port: 0, realtime: false, ...opts });
  return agent;
}

async function connect(): Promise<AgentTestClient> {
  const client = await AgentTestClient.connect(agent!.url);
  clients.push(client);
  await client.next('Welcome');
  return client;
}

async function live(settings = makeSettings()): Promise<AgentTestClient> {
  const client = await AgentTestClient.live(agent!.url, settings);
  clients.push(client);
  return client;
}

const TURN = { provider: { type: 'speech', version: 'v2', model: 'turn-kit-en' } };
const LYRIC = { provider: { type: 'speech', model: 'lyric-2-andromeda-en' } };
const LOOKUP = {
  name: 'lookup_order',
  description: 'Finds an order',
  parameters: { type: 'object', properties: {} },
};

describe('fallback chains in Settings', () => {
  it('accepts speak and think lists', async () => {
    await start();
    const client = await connect();
    client.send(
      makeSettings({
        agent: {
          speak: [TURN, LYRIC],
          think: [
            { provider: { type: 'open_ai', model: 'gpt-4o-mini' }, prompt: 'Be brief.', functions: [LOOKUP] },
            { provider: { type: 'anthropic', model: 'claude-3-5-haiku-latest' }, prompt: 'Be brief.' },
          ],
        },
      }),
    );
    await client.next('SettingsApplied');
  });

  it('names the entry of a list that breaks the version rule', async () => {
    await start();
    const client = await connect();
    client.send(
      makeSettings({
        agent: { speak: [TURN, { provider: { type: 'x', version: 'v2', model: 'lyric-2-a-en' } }] },
      }),
    );
    const error = await client.next('Error');
    expect(error).toMatchObject({ code: 'INVALID_SETTINGS' });
    expect(error.description).toMatch(/^agent\.speak\[1\]\.provider version v2 requires a turn- model/);
    await client.closed;
  });

  it('refuses an empty list and a list of the wrong things', async () => {
    await start();
    for (const speak of [[], ['turn-kit-en'], Array.from({ length: 6 }, () => TURN)]) {
      const client = await connect();
      client.send(makeSettings({ agent: { speak } }));
      expect((await client.next('Error')).code).toBe('INVALID_SETTINGS');
      await client.closed;
    }
  });
});

describe('History', () => {
  const scenario: Scenario = {
    turns: [
      {
        user: 'Where is order 42?',
        functionCalls: [{ name: 'lookup_order', arguments: { order: '42' } }],
        reply: 'check',
      },
    ],
  };

  it('sends History events as the conversation goes when flags.history is set', async () => {
    await start({ scenario });
    const client = await live({
      ...makeSettings({ agent: { think: { provider: { type: 'open_ai' }, functions: [LOOKUP] } } }),
      flags: { history: true },
    });
    client.send({ type: 'InjectUserMessage', content: 'Where is order 42?' });
    await client.next('ConversationText');
    expect(await client.next('History')).toEqual({
      type: 'History',
      role: 'user',
      content: 'Where is order 42?',
    });
    await client.next('AgentThinking');
    const request = await client.next('FunctionCallRequest');
    const [call] = request.functions as Array<{ id: string }>;
    client.send({
      type: 'FunctionCallResponse',
      id: call!.id,
      name: 'lookup_order',
      content: '{"status":"shipped"}',
    });
    expect(await client.next('History')).toEqual({
      type: 'History',
      function_calls: [
        {
          id: call!.id,
          name: 'lookup_order',
          arguments: '{"order":"42"}',
          client_side: true,
          response: '{"status":"shipped"}',
        },
      ],
    });
    await client.next('ConversationText');
    expect(await client.next('History')).toMatchObject({
      role: 'assistant',
      content: 'Let me check that for you.',
    });
  });

  it('sends no History without the flag', async () => {
    await start();
    const client = await live();
    client.send({ type: 'InjectUserMessage', content: 'Hello' });
    await client.until('AgentAudioDone');
    expect(client.indexOf('History')).toBe(-1);
  });

  it('takes History with function calls in agent.context, and refuses a malformed one', async () => {
    await start();
    const messages = [
      { type: 'History', role: 'user', content: 'Where is order 42?' },
      {
        type: 'History',
        function_calls: [
          { id: 'fc_1', name: 'lookup_order', client_side: true, arguments: '{}', response: '{}' },
        ],
      },
    ];
    await live(makeSettings({ agent: { context: { messages } } }));
    const client = await connect();
    client.send(
      makeSettings({
        agent: { context: { messages: [{ type: 'History', function_calls: [{ id: 'fc_1' }] }] } },
      }),
    );
    expect((await client.next('Error')).description).toMatch(
      /function_calls\[0\] needs id, name, client_side/,
    );
  });
});

describe('LatencyReport', () => {
  it('is sent with each reply when asked for, and never otherwise', async () => {
    await start({ latencyReports: true });
    const client = await live(makeSettings({ agent: { greeting: 'Hello.' } }));
    await client.next('ConversationText');
    await client.next('AgentStartedSpeaking');
    const report = await client.next('LatencyReport');
    for (const field of [
      'stt_latency',
      'ttt_token_latency',
      'ttt_text_latency',
      'tts_latency',
      'total_latency',
    ]) {
      expect(report[field]).toEqual(expect.any(Number));
    }
    await agent!.close();
    await start({ scenario: { turns: [], latencyReports: false } });
    const quiet = await live(makeSettings({ agent: { greeting: 'Hello.' } }));
    await quiet.until('AgentAudioDone');
    expect(quiet.indexOf('LatencyReport')).toBe(-1);
  });
});

describe('Update messages', () => {
  it('acknowledges UpdateThink, UpdateListen and a speak list in UpdateSpeak', async () => {
    await start();
    const client = await live();
    client.send({
      type: 'UpdateThink',
      think: { provider: { type: 'anthropic', model: 'claude-3-5-haiku-latest' } },
    });
    await client.next('ThinkUpdated');
    client.send({ type: 'UpdateListen', listen: { provider: { type: 'speech', model: 'std-3' } } });
    await client.next('ListenUpdated');
    client.send({ type: 'UpdateSpeak', speak: [TURN, LYRIC] });
    await client.next('SpeakUpdated');
  });

  it('fails the session on an invalid update, as on invalid Settings', async () => {
    await start();
    for (const message of [
      { type: 'UpdateListen', listen: { provider: {} } },
      { type: 'UpdateThink' },
      { type: 'UpdateThink', think: [] },
      { type: 'UpdateSpeak', speak: [TURN, { provider: { type: 'x', model: 'turn-kit-en' } }] },
    ]) {
      const client = await live();
      client.send(message);
      expect((await client.next('Error')).code).toBe('INVALID_SETTINGS');
      await client.closed;
    }
  });
});

describe('InjectAgentMessage behavior', () => {
  it('interrupt cuts the reply being spoken short and speaks at once', async () => {
    await start({ realtime: true });
    const client = await live(
      makeSettings({ agent: { greeting: 'Hello, thanks for calling. How can I help you today?' } }),
    );
    await client.next('ConversationText');
    await client.next('AgentStartedSpeaking');
    await client.firstAudio();
    client.send({
      type: 'InjectAgentMessage',
      message: 'Goodbye, and thanks for calling.',
      behavior: 'interrupt',
    });
    expect(await client.next('ConversationText')).toMatchObject({
      content: 'Goodbye, and thanks for calling.',
    });
    await client.next('AgentStartedSpeaking');
    await client.next('AgentAudioDone');
    // The interrupted greeting never finished: one AgentAudioDone in all, the injected message's.
    expect(client.received.filter((r) => r.kind === 'json' && r.msg.type === 'AgentAudioDone')).toHaveLength(
      1,
    );
  });

  it('queue waits for the end of the caller turn instead of being refused', async () => {
    await start();
    const client = await live();
    sendFrames(client, toneMulaw(300));
    await client.next('UserStartedSpeaking');
    client.send({ type: 'InjectAgentMessage', message: 'Are you still there?', behavior: 'queue' });
    client.send({ type: 'InjectAgentMessage', message: 'Hello?', behavior: 'interrupt' });
    expect(await client.next('InjectionRefused')).toMatchObject({ message: 'the user is speaking' });
    sendFrames(client, silenceMulaw(700));
    await client.until('AgentAudioDone');
    expect((await client.until('ConversationText')).content).toBe('Are you still there?');
  });

  it('warns about an unknown behavior', async () => {
    await start();
    const client = await live();
    client.send({ type: 'InjectAgentMessage', message: 'Hi', behavior: 'shout' });
    expect((await client.next('Warning')).code).toBe('INVALID_CLIENT_MESSAGE');
  });
});
