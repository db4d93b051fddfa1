// The opening of a session and the Settings rules (docs/protocols/agent.md sections 3 and 4).
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_PHRASE_DIR } from '../../src/sim/agent/phrases.js';
import { type LocalAgent, startLocalAgent } from '../../src/sim/agent/server.js';
import { AgentTestClient, makeSettings } from './local-agent-client.js';

let agent: LocalAgent;
const clients: AgentTestClient[] = [];

beforeEach(async () => {
  agent = await startLocalAgent({ port: 0, realtime: false });
});

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await agent.close();
});

async function connect(): Promise<AgentTestClient> {
  const client = await AgentTestClient.connect(agent.url);
  clients.push(client);
  return client;
}

describe('session opening', () => {
  it('sends Welcome, applies Settings, then speaks the greeting in the output encoding', async () => {
    const client = await connect();
    const welcome = await client.next('Welcome');
    expect(welcome.request_id).toEqual(expect.any(String));

    const greeting = 'Hello, thanks for calling. How can I help you today?';
    client.send(makeSettings({ agent: { greeting } }));
    await client.next('SettingsApplied');
    expect(await client.next('ConversationText')).toEqual({
      type: 'ConversationText',
      role: 'assistant',
      content: greeting,
    });
    const started = await client.next('AgentStartedSpeaking');
    expect(started).toMatchObject({
      total_latency: expect.any(Number),
      tts_latency: expect.any(Number),
      ttt_latency: expect.any(Number),
    });
    const audioFrom = client.cursor;
    await client.next('AgentAudioDone');
    const audio = client.audioBytes(audioFrom, client.cursor);
    // μ-law 8 kHz out: the bundled recording byte for byte.
    expect(audio.equals(readFileSync(`${DEFAULT_PHRASE_DIR}/greeting.ulaw`))).toBe(true);
  });

  it('speaks a greeting no phrase matches with placeholder audio', async () => {
    const client = await connect();
    await client.next('Welcome');
    client.send(makeSettings({ agent: { greeting: 'Welcome to the test line.' } }));
    await client.next('SettingsApplied');
    expect((await client.next('ConversationText')).content).toBe('Welcome to the test line.');
    await client.next('AgentStartedSpeaking');
    const from = client.cursor;
    await client.next('AgentAudioDone');
    expect(client.audioBytes(from, client.cursor).length).toBeGreaterThan(0);
  });

  it('sends no greeting when Settings has none', async () => {
    const client = await connect();
    await client.next('Welcome');
    client.send(makeSettings());
    await client.next('SettingsApplied');
    client.send({ type: 'NoSuchMessage' });
    // The Warning comes right after SettingsApplied: nothing was spoken in between.
    expect((await client.next('Warning')).code).toBe('UNKNOWN_MESSAGE_TYPE');
    expect(client.audioBytes().length).toBe(0);
  });

  it('closes with Error on invalid JSON', async () => {
    const client = await connect();
    await client.next('Welcome');
    client.ws.send('{not json');
    expect((await client.next('Error')).code).toBe('UNPARSABLE_CLIENT_MESSAGE');
    expect((await client.closed).code).toBe(1008);
  });

  it('closes with Error when the first message is not Settings', async () => {
    const client = await connect();
    await client.next('Welcome');
    client.send({ type: 'KeepAlive' });
    expect((await client.next('Error')).code).toBe('UNPARSABLE_CLIENT_MESSAGE');
    await client.closed;
  });

  it('rejects an output container other than none', async () => {
    const client = await connect();
    await client.next('Welcome');
    client.send(makeSettings({ output: { encoding: 'linear16', sample_rate: 16000, container: 'wav' } }));
    const error = await client.next('Error');
    expect(error.code).toBe('INVALID_SETTINGS');
    expect(error.description).toMatch(/container/);
    await client.closed;
  });

  it('rejects an unknown input encoding', async () => {
    const client = await connect();
    await client.next('Welcome');
    client.send(makeSettings({ input: { encoding: 'opus', sample_rate: 8000 } }));
    expect((await client.next('Error')).description).toMatch(/audio\.input\.encoding/);
    await client.closed;
  });
});

describe('speak provider rules (docs/protocols/agent.md section 4.2)', () => {
  it.each([
    ['v1 with a turn- model', { type: 'x', version: 'v1', model: 'turn-kit-en' }],
    ['v2 with a lyric- model', { type: 'x', version: 'v2', model: 'lyric-2-en' }],
    ['version omitted (v1) with a turn- model', { type: 'x', model: 'turn-kit-en' }],
    ['an unknown version', { type: 'x', version: 'v3', model: 'turn-kit-en' }],
  ])('rejects %s with Error and closes', async (_name, provider) => {
    const client = await connect();
    await client.next('Welcome');
    client.send(makeSettings({ agent: { speak: { provider } } }));
    const error = await client.next('Error');
    expect(error.code).toBe('INVALID_SETTINGS');
    expect(error.description).toMatch(/agent\.speak\.provider/);
    expect((await client.closed).code).toBe(1008);
  });

  it.each([
    ['speak omitted (turn-kit-en)', undefined],
    ['v1 with a lyric- model', { provider: { type: 'x', version: 'v1', model: 'lyric-2-en' } }],
    ['version omitted with a lyric- model', { provider: { type: 'x', model: 'lyric-2-en' } }],
    ['v2 with a turn- model', { provider: { type: 'x', version: 'v2', model: 'turn-kit-en' } }],
  ])('accepts %s', async (_name, speak) => {
    const client = await connect();
    await client.next('Welcome');
    client.send(makeSettings(speak ? { agent: { speak } } : {}));
    await client.next('SettingsApplied');
  });

  it('applies UpdateSpeak by the same rules', async () => {
    const client = await AgentTestClient.live(agent.url);
    clients.push(client);
    client.send({
      type: 'UpdateSpeak',
      speak: { provider: { type: 'x', version: 'v2', model: 'turn-kit-en' } },
    });
    await client.next('SpeakUpdated');
    client.send({ type: 'UpdateSpeak', speak: { provider: { type: 'x', model: 'turn-kit-en' } } });
    expect((await client.next('Error')).code).toBe('INVALID_SETTINGS');
    await client.closed;
  });
});

describe('messages after SettingsApplied', () => {
  it('tolerates KeepAlive, answers UpdatePrompt, warns on unknown types and on a second Settings', async () => {
    const client = await AgentTestClient.live(agent.url);
    clients.push(client);
    client.send({ type: 'KeepAlive' });
    client.send({ type: 'UpdatePrompt', prompt: ' Speak slowly.' });
    await client.next('PromptUpdated');
    client.send({ type: 'Whatever', x: 1 });
    expect((await client.next('Warning')).code).toBe('UNKNOWN_MESSAGE_TYPE');
    client.send(makeSettings());
    expect((await client.next('Warning')).code).toBe('SETTINGS_ALREADY_APPLIED');
    client.send({ type: 'FunctionCallResponse', id: 'fc_nope', name: 'x', content: '{}' });
    expect((await client.next('Warning')).code).toBe('UNKNOWN_FUNCTION_CALL');
    expect(client.ws.readyState).toBe(client.ws.OPEN);
  });
});
