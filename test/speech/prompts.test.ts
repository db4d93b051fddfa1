// Rendered prompts (src/speech/prompts.ts): rendered by the speak endpoint of the voice's version,
// cached on disk and reused, and the bundled recording played when the service is down.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeLinear16, encodeLinear16 } from '../../src/audio/codec.js';
import { writeWavEncoded } from '../../src/audio/wav-writer.js';
import { DEFAULT_PROMPT_TEXTS, type PromptsConfig } from '../../src/config/prompts.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { type LocalAgent, startLocalAgent } from '../../src/sim/agent/server.js';
import { BUNDLED_PROMPTS, cacheKey, PromptAudio } from '../../src/speech/prompts.js';
import { type FakeSpeech, startFakeSpeech } from '../helpers/fake-speech.js';

const MULAW_8K = { encoding: 'mulaw' as const, sampleRate: 8000 };
const TURN: PromptsConfig = {
  voice: { version: 'v2', model: 'turn-kit-en' },
  render: 'first_use',
  formats: [MULAW_8K],
  texts: { ...DEFAULT_PROMPT_TEXTS },
};

/** 0.3 s of a 24 kHz linear16 ramp, as a WAV: a service that picked its own rate. */
function wav24k(): Buffer {
  const samples = new Int16Array(7200).map((_, i) => (i % 200) * 50);
  return writeWavEncoded(encodeLinear16(samples), 'linear16', 24_000);
}

let dir: string;
let clockMs: number;
let speech: FakeSpeech | undefined;
let local: LocalAgent | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'callbridge-prompts-'));
  clockMs = 1_000_000;
});

afterEach(async () => {
  await speech?.close();
  speech = undefined;
  await local?.close();
  local = undefined;
  rmSync(dir, { recursive: true, force: true });
});

function prompts(baseUrl: string | null, config: PromptsConfig | null = TURN) {
  const metrics = createMetrics('global');
  const audio = new PromptAudio({
    config,
    api: baseUrl === null ? null : { baseUrl, authorization: 'Token test-key', timeoutMs: 1_000 },
    cacheDir: join(dir, 'prompts'),
    logger: pino({ level: 'silent' }),
    metrics,
    now: () => clockMs,
    retryAfterMs: 30_000,
  });
  return { audio, metrics };
}

async function sources(metrics: ReturnType<typeof createMetrics>) {
  const metric = await metrics.promptRenders.get();
  return Object.fromEntries(metric.values.map((v) => [`${v.labels.kind}/${v.labels.source}`, v.value]));
}

describe('rendered prompts', () => {
  it('renders a turn- voice with /v2/speak in the leg encoding, naming no sample rate, and resamples', async () => {
    speech = await startFakeSpeech();
    speech.always('/v2/speak', { status: 200, body: wav24k(), contentType: 'audio/wav' });
    const { audio } = prompts(speech.url);
    const rendered = await audio.promptAudioWithSource('unavailable', MULAW_8K);
    expect(rendered.source).toBe('rendered');
    // 7200 samples at 24 kHz are 2400 at 8 kHz, one μ-law byte each.
    expect(rendered.audio).toHaveLength(2400);

    expect(speech.requests).toHaveLength(1);
    const request = speech.requests[0]!;
    expect(request.method).toBe('POST');
    expect(Object.fromEntries(request.query)).toEqual({
      model: 'turn-kit-en',
      encoding: 'mulaw',
      container: 'wav',
    });
    expect(JSON.parse(request.body)).toEqual({ text: DEFAULT_PROMPT_TEXTS.unavailable });
    expect(request.headers.authorization).toBe('Token test-key');
  });

  it('renders a lyric- voice with /v1/speak, with its speed', async () => {
    speech = await startFakeSpeech();
    speech.always('/v1/speak', { status: 200, body: wav24k() });
    const { audio } = prompts(speech.url, {
      ...TURN,
      voice: { version: 'v1', model: 'lyric-2-andromeda-en', speed: 1.2 },
    });
    const linear = await audio.promptAudio('at_capacity', { encoding: 'linear16', sampleRate: 16_000 });
    expect(decodeLinear16(linear!)).toHaveLength(4800);
    expect(speech.requests[0]?.path).toBe('/v1/speak');
    expect(Object.fromEntries(speech.requests[0]!.query)).toEqual({
      model: 'lyric-2-andromeda-en',
      encoding: 'linear16',
      container: 'wav',
      speed: '1.2',
    });
  });

  it('caches a rendered prompt on disk and reuses it, in this process and the next', async () => {
    // A prompt is rendered once per text, voice and format; every later call reuses it.
    speech = await startFakeSpeech();
    speech.always('/v2/speak', { status: 200, body: wav24k() });
    const first = prompts(speech.url);
    const rendered = await first.audio.promptAudio('drain_goodbye', MULAW_8K);
    expect((await first.audio.promptAudioWithSource('drain_goodbye', MULAW_8K)).source).toBe('memory');
    const key = cacheKey(DEFAULT_PROMPT_TEXTS.drain_goodbye, TURN, MULAW_8K);
    expect(readdirSync(join(dir, 'prompts'))).toEqual([`${key}.raw`]);
    expect(readFileSync(join(dir, 'prompts', `${key}.raw`))).toEqual(rendered);

    const restarted = prompts(speech.url);
    const again = await restarted.audio.promptAudioWithSource('drain_goodbye', MULAW_8K);
    expect(again).toEqual({ audio: rendered, source: 'disk' });
    expect(speech.requests).toHaveLength(1);
    expect(await sources(restarted.metrics)).toEqual({ 'drain_goodbye/cache': 1 });

    // Another format, text or voice is another rendering.
    await restarted.audio.promptAudio('drain_goodbye', { encoding: 'alaw', sampleRate: 8000 });
    await restarted.audio.promptAudio('unavailable', MULAW_8K);
    expect(speech.requests).toHaveLength(3);
    expect(cacheKey('a', TURN, MULAW_8K)).not.toBe(
      cacheKey('a', { voice: { ...TURN.voice, speed: 1.1 } }, MULAW_8K),
    );
  });

  it('plays the bundled recording when the service is down, and leaves the service alone for a while', async () => {
    speech = await startFakeSpeech();
    speech.always('/v2/speak', { status: 503 });
    const { audio, metrics } = prompts(speech.url);
    const bundled = readFileSync(BUNDLED_PROMPTS.unavailable!);
    expect(await audio.promptAudioWithSource('unavailable', MULAW_8K)).toEqual({
      audio: bundled,
      source: 'bundled',
    });
    expect(await audio.promptAudio('at_capacity', MULAW_8K)).toEqual(bundled);
    expect(await audio.promptAudio('drain_goodbye', MULAW_8K)).toEqual(
      readFileSync(BUNDLED_PROMPTS.drain_goodbye!),
    );
    // One failed request; the next ones waited out the pause.
    expect(speech.requests).toHaveLength(1);
    clockMs += 30_000;
    speech.always('/v2/speak', { status: 200, body: wav24k() });
    expect((await audio.promptAudioWithSource('unavailable', MULAW_8K)).source).toBe('rendered');
    expect(await sources(metrics)).toEqual({
      'unavailable/bundled': 1,
      'at_capacity/bundled': 1,
      'drain_goodbye/bundled': 1,
      'unavailable/rendered': 1,
    });
  });

  for (const [row, status, body] of [
    [
      'the character rate limit of version 1 speak (DATA-0001)',
      429,
      { err_code: 'DATA-0001', err_msg: 'slow down' },
    ],
    ['too many simultaneous connections', 429, undefined],
    [
      'a version 2 speak request rejected (a lyric- model, no model)',
      400,
      { err_code: 'INVALID_QUERY_PARAMETER' },
    ],
    ['an empty text refused', 400, { err_msg: 'text must not be empty' }],
  ] as const) {
    it(`plays the bundled recording on ${row}, and does not retry at once`, async () => {
      speech = await startFakeSpeech();
      speech.always('/v2/speak', { status, ...(body ? { body } : {}) });
      const { audio } = prompts(speech.url);
      const bundled = readFileSync(BUNDLED_PROMPTS.unavailable!);
      for (let i = 0; i < 3; i++) expect(await audio.promptAudio('unavailable', MULAW_8K)).toEqual(bundled);
      expect(speech.requests).toHaveLength(1);
    });
  }

  it('plays the bundled recording, converted, when the host cannot be reached or answers no WAV', async () => {
    const gone = await startFakeSpeech();
    const url = gone.url;
    await gone.close();
    const { audio } = prompts(url);
    const linear = await audio.promptAudio('unavailable', { encoding: 'linear16', sampleRate: 16_000 });
    expect(linear).toHaveLength(readFileSync(BUNDLED_PROMPTS.unavailable!).length * 4);

    speech = await startFakeSpeech();
    speech.always('/v2/speak', { status: 200, body: Buffer.from('raw bytes, no header') });
    const other = prompts(speech.url).audio;
    expect((await other.promptAudioWithSource('unavailable', MULAW_8K)).source).toBe('bundled');
  });

  it('plays the bundled recordings without asking anyone when rendering is not configured', async () => {
    speech = await startFakeSpeech();
    const { audio } = prompts(speech.url, null);
    expect(audio.rendering).toBe(false);
    expect(await audio.promptAudioWithSource('unavailable', MULAW_8K)).toMatchObject({ source: 'bundled' });
    expect(await prompts(null).audio.promptAudio('drain_goodbye', MULAW_8K)).toEqual(
      readFileSync(BUNDLED_PROMPTS.drain_goodbye!),
    );
    expect(speech.requests).toHaveLength(0);
  });

  it("renders a campaign's voicemail text, and has nothing to play for it without a service", async () => {
    speech = await startFakeSpeech();
    speech.always('/v2/speak', { status: 200, body: wav24k() });
    const { audio } = prompts(speech.url);
    expect(
      await audio.promptAudio('voicemail', MULAW_8K, { text: 'Hi Ada, this is Example Dental.' }),
    ).toHaveLength(2400);
    expect(JSON.parse(speech.requests[0]!.body)).toEqual({ text: 'Hi Ada, this is Example Dental.' });
    expect(await audio.promptAudio('voicemail', MULAW_8K)).toBeNull();
    expect(await prompts(null).audio.promptAudio('voicemail', MULAW_8K, { text: 'Hi' })).toBeNull();
  });

  it('renders every fixed prompt in every configured format at start', async () => {
    speech = await startFakeSpeech();
    speech.always('/v2/speak', { status: 200, body: wav24k() });
    const formats = [MULAW_8K, { encoding: 'linear16' as const, sampleRate: 16_000 }];
    const { audio } = prompts(speech.url, { ...TURN, render: 'start', formats });
    await audio.warm();
    expect(speech.requests).toHaveLength(6);
    expect(readdirSync(join(dir, 'prompts'))).toHaveLength(6);
  });

  it('renders through the local speech service: the bundled phrase when the text is one', async () => {
    local = await startLocalAgent({ port: 0 });
    const { audio } = prompts(local.httpUrl);
    const rendered = await audio.promptAudioWithSource('unavailable', MULAW_8K);
    expect(rendered.source).toBe('rendered');
    expect(rendered.audio).toEqual(readFileSync(BUNDLED_PROMPTS.unavailable!));
    const lyric = prompts(local.httpUrl, {
      ...TURN,
      voice: { version: 'v1', model: 'lyric-2-andromeda-en', speed: 0.9 },
    }).audio;
    expect((await lyric.promptAudioWithSource('voicemail', MULAW_8K, { text: 'Hello there' })).source).toBe(
      'rendered',
    );
  });
});

describe('PromptAudio with a local voice and no rendering', () => {
  // A text prompt (a recording's consent) is spoken by the local voice when nothing renders it,
  // in the asked format; the fixed prompts keep their bundled recordings.
  it('speaks a voicemail text with the local voice and leaves the fixed prompts bundled', async () => {
    const spoken: string[] = [];
    const prompts = new PromptAudio({
      config: null,
      api: null,
      cacheDir: '',
      logger: pino({ level: 'silent' }),
      localVoice: async (text) => {
        spoken.push(text);
        return Buffer.alloc(160, 0x7f);
      },
    });
    const said = await prompts.promptAudioWithSource(
      'voicemail',
      { encoding: 'linear16', sampleRate: 16000 },
      { text: 'This call is recorded.', localVoice: true },
    );
    expect(said.source).toBe('local');
    expect(said.audio?.length).toBe(640);
    expect(spoken).toEqual(['This call is recorded.']);
    const fixed = await prompts.promptAudioWithSource('unavailable', { encoding: 'mulaw', sampleRate: 8000 });
    expect(fixed.source).toBe('bundled');
    expect(spoken).toHaveLength(1);
  });

  it("leaves a campaign's voicemail text to the agent unless the local voice is asked for", async () => {
    const spoken: string[] = [];
    const prompts = new PromptAudio({
      config: null,
      api: null,
      cacheDir: '',
      logger: pino({ level: 'silent' }),
      localVoice: async (text) => {
        spoken.push(text);
        return Buffer.alloc(160, 0x7f);
      },
    });
    const said = await prompts.promptAudioWithSource('voicemail', MULAW_8K, { text: 'Hi Ada' });
    expect(said).toEqual({ audio: null, source: 'bundled' });
    expect(spoken).toEqual([]);
  });
});
