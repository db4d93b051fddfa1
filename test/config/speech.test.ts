// ANALYSIS and config/prompts.json (docs/protocols/speech-service.md sections 6, 7, 10 and 11), checked when configuration
// loads: every bad value is one line naming the variable or the file and field.
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_PROMPT_TEXTS } from '../../src/config/prompts.js';
import { configErrorOf, load, makeProject, removeProjects } from './project.js';

afterEach(removeProjects);

const FILE = 'config/prompts.json';
const withPrompts = (prompts: unknown) => makeProject({ 'config/prompts.json': prompts });
const promptsError = (prompts: unknown) => configErrorOf(() => load({}, withPrompts(prompts))).message;

describe('ANALYSIS', () => {
  it('is on with the built-in local agent and off with a hosted one, unless set', () => {
    expect(load({}).speech?.analysis).toBe(true);
    expect(load({ AGENT_URL: 'wss://agent.example.com', AGENT_API_KEY: 'k' }).speech?.analysis).toBe(false);
    expect(load({ ANALYSIS: 'off' }).speech?.analysis).toBe(false);
    expect(
      load({ ANALYSIS: 'on', AGENT_URL: 'wss://agent.example.com', AGENT_API_KEY: 'k' }).speech?.analysis,
    ).toBe(true);
  });

  it('names the variable when its value is neither on nor off', () => {
    expect(configErrorOf(() => load({ ANALYSIS: 'yes' })).message).toBe(
      'ANALYSIS: must be one of on, off, got "yes"',
    );
  });

  it('keeps SPEECH_API_URL as an override only when it is set', () => {
    expect(load({}).speech?.apiUrlOverride).toBeNull();
    expect(load({ SPEECH_API_URL: 'http://127.0.0.1:8090/' }).speech?.apiUrlOverride).toBe(
      'http://127.0.0.1:8090',
    );
  });
});

describe('config/prompts.json', () => {
  it('is optional: without it nothing is rendered', () => {
    expect(load({}).speech?.prompts).toBeNull();
  });

  it('fills render, formats and texts', () => {
    const prompts = load({}, withPrompts({ voice: { version: 'v2', model: 'turn-kit-en' } })).speech?.prompts;
    expect(prompts).toEqual({
      voice: { version: 'v2', model: 'turn-kit-en' },
      render: 'first_use',
      formats: [{ encoding: 'mulaw', sampleRate: 8000 }],
      texts: DEFAULT_PROMPT_TEXTS,
    });
  });

  it('keeps a full file, dropping a repeated format', () => {
    const prompts = load(
      {},
      withPrompts({
        voice: { model: 'lyric-2-andromeda-en', speed: 0.8 },
        render: 'start',
        formats: [
          { encoding: 'alaw', sampleRate: 8000 },
          { encoding: 'linear16', sampleRate: 16000 },
          { encoding: 'alaw', sampleRate: 8000 },
        ],
        texts: { unavailable: 'We are closed.' },
      }),
    ).speech?.prompts;
    expect(prompts).toEqual({
      voice: { version: 'v1', model: 'lyric-2-andromeda-en', speed: 0.8 },
      render: 'start',
      formats: [
        { encoding: 'alaw', sampleRate: 8000 },
        { encoding: 'linear16', sampleRate: 16000 },
      ],
      texts: { ...DEFAULT_PROMPT_TEXTS, unavailable: 'We are closed.' },
    });
  });

  it('holds the voice to the version rules: v2 needs turn- and rejects lyric-, v1 needs lyric-', () => {
    expect(promptsError({ voice: { version: 'v2', model: 'lyric-2-andromeda-en' } })).toBe(
      `${FILE}: /voice/model: version v2 needs a turn- model, got "lyric-2-andromeda-en"`,
    );
    expect(promptsError({ voice: { model: 'turn-kit-en' } })).toBe(
      `${FILE}: /voice/model: version v1 (the default when version is omitted) needs a lyric- model, got "turn-kit-en"; set "version": "v2" for turn- voices`,
    );
    expect(promptsError({ voice: { version: 'v2', model: 'turn-' } })).toMatch(
      /needs a turn- model, got "turn-"/,
    );
    expect(promptsError({ voice: { version: 'v3', model: 'turn-kit-en' } })).toBe(
      `${FILE}: /voice/version: must be "v1" or "v2", got "v3"`,
    );
    expect(promptsError({ voice: {} })).toBe(`${FILE}: /voice/model: is required`);
  });

  it('holds speed to its version: 0.7 to 1.5 for lyric-2 en/es on v1, 0.5 to 1.5 by 0.05 on v2', () => {
    expect(promptsError({ voice: { model: 'lyric-2-andromeda-en', speed: 1.6 } })).toBe(
      `${FILE}: /voice/speed: must be from 0.7 to 1.5 on version v1, got 1.6`,
    );
    expect(promptsError({ voice: { model: 'lyric-1-asteria-en', speed: 1 } })).toMatch(
      /English and Spanish voices/,
    );
    expect(promptsError({ voice: { version: 'v2', model: 'turn-kit-en', speed: 0.52 } })).toBe(
      `${FILE}: /voice/speed: must be from 0.5 to 1.5 in steps of 0.05 on version v2, got 0.52`,
    );
    expect(
      load({}, withPrompts({ voice: { version: 'v2', model: 'turn-kit-en', speed: 0.55 } })).speech?.prompts
        ?.voice.speed,
    ).toBe(0.55);
  });

  it('takes only the encodings and rates a phone leg carries', () => {
    const voice = { version: 'v2', model: 'turn-kit-en' };
    expect(promptsError({ voice, formats: [{ encoding: 'mp3', sampleRate: 8000 }] })).toBe(
      `${FILE}: /formats/0/encoding: must be one of linear16, mulaw, alaw (what a phone leg carries), got "mp3"`,
    );
    expect(promptsError({ voice, formats: [{ encoding: 'mulaw', sampleRate: 44100 }] })).toBe(
      `${FILE}: /formats/0/sampleRate: must be one of 8000, 16000, 24000, got 44100`,
    );
    expect(promptsError({ voice, formats: [] })).toMatch(/^config\/prompts.json: \/formats: /);
  });

  it('refuses empty or overlong texts, unknown prompts and fields', () => {
    const voice = { version: 'v2', model: 'turn-kit-en' };
    expect(promptsError({ voice, texts: { unavailable: '' } })).toBe(
      `${FILE}: /texts/unavailable: must not be empty, got ""`,
    );
    expect(promptsError({ voice, texts: { unavailable: 'x'.repeat(2001) } })).toMatch(
      /^config\/prompts.json: \/texts\/unavailable: must be at most 2000 characters, got "x+\.\.\."$/,
    );
    expect(promptsError({ voice, texts: { voicemail: 'Hi' } })).toBe(
      `${FILE}: /texts/voicemail: unknown field`,
    );
    expect(promptsError({ voice, render: 'later' })).toBe(
      `${FILE}: /render: must be "start" or "first_use", got "later"`,
    );
    expect(promptsError('{')).toMatch(/^config\/prompts.json: invalid JSON/);
  });
});
