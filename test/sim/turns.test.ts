// Turn-taking on the caller's audio: speech, end of turn, the reply and barge-in (docs/protocols/agent.md section 13).
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { transcode } from '../../src/audio/codec.js';
import { DEFAULT_PHRASE_DIR } from '../../src/sim/agent/phrases.js';
import { type LocalAgent, type LocalAgentOptions, startLocalAgent } from '../../src/sim/agent/server.js';
import {
  AgentTestClient,
  makeSettings,
  sendFrames,
  silenceLinear16,
  silenceMulaw,
  toneLinear16,
  toneMulaw,
} from './local-agent-client.js';

const phrase = (id: string) => readFileSync(`${DEFAULT_PHRASE_DIR}/${id}.ulaw`);
const REPLY_SEQUENCE = [
  'UserStartedSpeaking',
  'ConversationText',
  'AgentThinking',
  'ConversationText',
  'AgentStartedSpeaking',
];

let agent: LocalAgent | undefined;
const clients: AgentTestClient[] = [];

async function start(opts: Partial<LocalAgentOptions> = {}): Promise<LocalAgent> {
  agent = await startLocalAgent({ port: 0, realtime: false, ...opts });
  return agent;
}

async function live(settings = makeSettings()): Promise<AgentTestClient> {
  const client = await AgentTestClient.live(agent!.url, settings);
  clients.push(client);
  return client;
}

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await agent?.close();
  agent = undefined;
});

describe('a caller turn', () => {
  it('ignores audio sent before SettingsApplied', async () => {
    await start();
    const client = await AgentTestClient.connect(agent!.url);
    clients.push(client);
    await client.next('Welcome');
    // A whole turn's worth of speech and silence, before Settings.
    sendFrames(client, Buffer.concat([toneMulaw(1000), silenceMulaw(800)]));
    client.send(makeSettings());
    await client.next('SettingsApplied');
    client.send({ type: 'NoSuchMessage' });
    // Had the early audio counted, UserStartedSpeaking would come before this Warning.
    await client.next('Warning');
    expect(client.audioBytes().length).toBe(0);
  });

  it('answers speech then silence with the events in order and μ-law 8 kHz reply audio', async () => {
    await start();
    const client = await live();
    sendFrames(client, Buffer.concat([toneMulaw(1000), silenceMulaw(700)]));
    const messages = [];
    for (const type of REPLY_SEQUENCE) messages.push(await client.next(type));
    const audioFrom = client.cursor;
    await client.next('AgentAudioDone');

    expect(messages[1]).toEqual({
      type: 'ConversationText',
      role: 'user',
      content: '(caller spoke for 1.0 s)',
    });
    expect(messages[2]).toMatchObject({ type: 'AgentThinking' });
    // No scenario: the first of the rotating bundled replies.
    expect(messages[3]).toEqual({
      type: 'ConversationText',
      role: 'assistant',
      content: 'Sure, I can help with that.',
    });
    expect(client.audioBytes(audioFrom, client.cursor).equals(phrase('help'))).toBe(true);
  });

  it('decodes linear16 16 kHz input and replies in linear16 16 kHz', async () => {
    await start();
    const rate = 16000;
    const client = await live(
      makeSettings({
        input: { encoding: 'linear16', sample_rate: rate },
        output: { encoding: 'linear16', sample_rate: rate, container: 'none' },
      }),
    );
    sendFrames(client, Buffer.concat([toneLinear16(800, rate), silenceLinear16(700, rate)]), 640);
    for (const type of REPLY_SEQUENCE) await client.next(type);
    const audioFrom = client.cursor;
    await client.next('AgentAudioDone');
    const audio = client.audioBytes(audioFrom, client.cursor);
    const expected = transcode(
      phrase('help'),
      { encoding: 'mulaw', sampleRate: 8000 },
      { encoding: 'linear16', sampleRate: rate },
    );
    expect(audio.length).toBe(phrase('help').length * 4);
    expect(audio.equals(expected)).toBe(true);
  });

  it('keeps one turn across a short pause and rotates replies turn by turn', async () => {
    await start();
    const client = await live();
    // 300 ms pause inside the turn: shorter than the 600 ms end-of-turn silence.
    sendFrames(client, Buffer.concat([toneMulaw(400), silenceMulaw(300), toneMulaw(400), silenceMulaw(700)]));
    await client.next('UserStartedSpeaking');
    expect((await client.next('ConversationText')).content).toBe('(caller spoke for 1.1 s)');
    await client.until('AgentAudioDone');
    sendFrames(client, Buffer.concat([toneMulaw(500), silenceMulaw(700)]));
    await client.next('UserStartedSpeaking');
    await client.next('ConversationText');
    await client.next('AgentThinking');
    expect((await client.next('ConversationText')).content).toBe('Let me check that for you.');
  });

  it('honours a configured end-of-turn silence', async () => {
    await start({ endOfTurnSilenceMs: 1500 });
    const client = await live();
    sendFrames(client, Buffer.concat([toneMulaw(500), silenceMulaw(1000)]));
    client.send({ type: 'NoSuchMessage' });
    await client.next('UserStartedSpeaking');
    // 1 s of silence is not yet the end of the turn.
    await client.next('Warning');
    sendFrames(client, silenceMulaw(600));
    await client.next('ConversationText');
  });

  it('uses the scenario transcript and reply', async () => {
    await start({ scenario: { turns: [{ user: 'Where is my order?', reply: 'goodbye' }] } });
    const client = await live();
    sendFrames(client, Buffer.concat([toneMulaw(600), silenceMulaw(700)]));
    await client.next('UserStartedSpeaking');
    expect((await client.next('ConversationText')).content).toBe('Where is my order?');
    await client.next('AgentThinking');
    expect((await client.next('ConversationText')).content).toBe('Goodbye, and thanks for calling.');
  });
});

describe('barge-in', () => {
  it('stops the reply audio at once when the caller starts speaking', async () => {
    // Paced like the real service, so the greeting is still being sent when the caller speaks.
    await start({ realtime: true });
    const greeting = 'Hello, thanks for calling. How can I help you today?';
    const client = await live(makeSettings({ agent: { greeting } }));
    await client.next('ConversationText');
    await client.next('AgentStartedSpeaking');
    const audioFrom = client.cursor;
    await client.firstAudio();
    sendFrames(client, toneMulaw(200));
    await client.until('UserStartedSpeaking');
    const bargeIn = client.cursor;
    sendFrames(client, silenceMulaw(700));
    await client.next('ConversationText');
    const turnText = client.cursor;

    const heard = client.audioBytes(audioFrom, bargeIn);
    expect(heard.length).toBeGreaterThan(0);
    expect(heard.length).toBeLessThan(phrase('greeting').length);
    // Not one byte of the greeting after UserStartedSpeaking, and no AgentAudioDone for it.
    expect(client.audioBytes(bargeIn, turnText).length).toBe(0);
    expect(client.indexOf('AgentAudioDone', audioFrom)).toBe(-1);
  });

  it('refuses InjectAgentMessage while the caller is speaking, and speaks it otherwise', async () => {
    await start();
    const client = await live();
    sendFrames(client, toneMulaw(300));
    await client.next('UserStartedSpeaking');
    client.send({ type: 'InjectAgentMessage', message: 'Are you still there?' });
    expect(await client.next('InjectionRefused')).toMatchObject({ message: expect.any(String) });
    sendFrames(client, silenceMulaw(700));
    await client.until('AgentAudioDone');
    client.send({ type: 'InjectAgentMessage', message: 'Is there anything else I can help you with?' });
    expect((await client.next('ConversationText')).role).toBe('assistant');
    await client.next('AgentStartedSpeaking');
    const from = client.cursor;
    await client.next('AgentAudioDone');
    expect(client.audioBytes(from, client.cursor).equals(phrase('anything-else'))).toBe(true);
  });

  it('answers InjectUserMessage as a caller turn', async () => {
    await start();
    const client = await live();
    client.send({ type: 'InjectUserMessage', content: 'The caller pressed 1.' });
    expect(await client.next('ConversationText')).toEqual({
      type: 'ConversationText',
      role: 'user',
      content: 'The caller pressed 1.',
    });
    await client.next('AgentThinking');
    expect((await client.next('ConversationText')).role).toBe('assistant');
    await client.next('AgentStartedSpeaking');
    await client.next('AgentAudioDone');
  });
});
