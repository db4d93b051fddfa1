// Settings built from a profile (docs/protocols/agent.md): think and speak fallback chains reach the
// agent as written, and a redialed agent's History carries the function calls already made.
import { afterEach, describe, expect, it } from 'vitest';
import { buildHistory } from '../../src/agent/history.js';
import { buildSettings } from '../../src/agent/settings.js';
import type { FunctionCallRecord, TurnRecord } from '../../src/store/call-record.js';
import { MULAW_8K } from '../../src/audio/format.js';
import { loadProfile, MINIMAL_PROFILE, removeProjects } from '../config/project.js';

afterEach(removeProjects);

const CALL = { callSid: 'CA1', streamSid: 'MZ1', carrier: 'twilio' };

const SPEAK_CHAIN = [
  { provider: { type: 'speech', version: 'v2', model: 'turn-kit-en', speed: 1.1 } },
  { provider: { type: 'speech', version: 'v1', model: 'lyric-2-andromeda-en' } },
  {
    provider: { type: 'other_tts', model: 'lyric-2-luna-en', voice_id: 'x-1' },
    endpoint: { url: 'https://tts.example.com' },
  },
];

describe('speak and think chains in Settings', () => {
  it('passes a speak fallback list to Settings intact, in order, each entry with its version', () => {
    // A speak list in the profile is the agent's fallback chain: losing, reordering or merging an
    // entry would change which voice the caller hears when the first one fails.
    const profile = loadProfile({ ...MINIMAL_PROFILE, speak: SPEAK_CHAIN });
    const settings = buildSettings(profile, CALL, MULAW_8K);
    expect(settings.agent.speak).toEqual([
      SPEAK_CHAIN[0],
      SPEAK_CHAIN[1],
      // A provider without version is v1 (docs/protocols/speech-service.md section 11), written out so the agent reads no default.
      { ...SPEAK_CHAIN[2], provider: { ...SPEAK_CHAIN[2]!.provider, version: 'v1' } },
    ]);
    // The JSON on the wire holds the same list.
    expect(JSON.parse(JSON.stringify(settings)).agent.speak).toHaveLength(3);
  });

  it('sends a single speak provider as one object, and none when the profile has none', () => {
    const one = loadProfile({ ...MINIMAL_PROFILE, speak: SPEAK_CHAIN[0] });
    expect(buildSettings(one, CALL, MULAW_8K).agent.speak).toEqual(SPEAK_CHAIN[0]);
    expect(buildSettings(loadProfile(MINIMAL_PROFILE), CALL, MULAW_8K).agent).not.toHaveProperty('speak');
  });

  it('gives every think entry of a chain the prompt and the functions', () => {
    const profile = loadProfile({
      ...MINIMAL_PROFILE,
      endCall: true,
      think: [
        { provider: { type: 'open_ai', model: 'gpt-4o-mini' } },
        {
          provider: { type: 'anthropic', model: 'claude-3-5-haiku-latest' },
          endpoint: { url: 'https://llm.example' },
        },
      ],
    });
    const think = buildSettings(profile, CALL, MULAW_8K).agent.think;
    expect(Array.isArray(think)).toBe(true);
    const entries = think as unknown as Array<Record<string, unknown>>;
    expect(entries.map((e) => (e.provider as { type: string }).type)).toEqual(['open_ai', 'anthropic']);
    for (const entry of entries) {
      expect(entry.prompt).toBe(MINIMAL_PROFILE.prompt);
      expect((entry.functions as Array<{ name: string }>).map((f) => f.name)).toEqual(['end_call']);
    }
    expect(entries[1]!.endpoint).toEqual({ url: 'https://llm.example' });
  });

  it('keeps a single think provider as one object', () => {
    const think = buildSettings(loadProfile(MINIMAL_PROFILE), CALL, MULAW_8K).agent.think;
    expect(think).toEqual({ provider: MINIMAL_PROFILE.think.provider, prompt: MINIMAL_PROFILE.prompt });
  });
});

describe('a redialed agent', () => {
  it('receives the function calls already made, with their answers, in its History', () => {
    // An agent redialed mid-call must know which functions already ran and what they returned, or
    // it asks again (a second order lookup, a second booking).
    const turns: TurnRecord[] = [
      { role: 'assistant', content: 'Hello, how can I help?', interrupted: false, atMs: 500 },
      { role: 'user', content: 'Where is order W-1?', interrupted: false, atMs: 4_000 },
      { role: 'assistant', content: 'It ships tomorrow.', interrupted: false, atMs: 6_000 },
    ];
    const calls: FunctionCallRecord[] = [
      {
        id: 'fc_7',
        name: 'lookup_order',
        arguments: '{"order_number":"W-1"}',
        response: '{"status":"ships tomorrow"}',
        thoughtSignature: 'sig-1',
        outcome: 'ok',
        durationMs: 80,
        atMs: 5_000,
      },
    ];
    const settings = buildSettings(loadProfile(MINIMAL_PROFILE), CALL, MULAW_8K, buildHistory(turns, calls));
    expect(settings.agent.context?.messages).toEqual([
      { type: 'History', role: 'assistant', content: 'Hello, how can I help?' },
      { type: 'History', role: 'user', content: 'Where is order W-1?' },
      {
        type: 'History',
        function_calls: [
          {
            id: 'fc_7',
            name: 'lookup_order',
            client_side: true,
            arguments: '{"order_number":"W-1"}',
            response: '{"status":"ships tomorrow"}',
            thought_signature: 'sig-1',
          },
        ],
      },
      { type: 'History', role: 'assistant', content: 'It ships tomorrow.' },
    ]);
    // A resumed conversation is not greeted again.
    expect(settings.agent).not.toHaveProperty('greeting');
  });
});
