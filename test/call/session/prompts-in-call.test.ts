// The fixed prompts where a caller hears no agent, over real sockets: when no agent can take the
// call, the caller hears the "unavailable" prompt rendered by the speak endpoint, rendered once and
// then reused from the cache; with the speech service down, the bundled recording plays instead.
// A call declined at the voice webhook hears the rendered decline through the carrier's player.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { readWav } from '../../../src/audio/wav.js';
import { writeWavEncoded } from '../../../src/audio/wav-writer.js';
import { readTwimlAnswer } from '../../../src/sim/carrier/twiml.js';
import { DEFAULT_PROMPT_TEXTS, type PromptsConfig } from '../../../src/config/prompts.js';
import { BUNDLED_PROMPTS, PromptAudio } from '../../../src/speech/prompts.js';
import { writeConfigDir } from '../../helpers/config-dir.js';
import { type FakeAgent, startFakeAgent } from '../../helpers/fake-agent.js';
import { type FakeSpeech, startFakeSpeech } from '../../helpers/fake-speech.js';
import { startServer, type TestServer } from '../../helpers/server.js';
import { newCallSid, openMediaStream, voiceWebhook } from '../../helpers/twilio-carrier.js';

const VOICE: PromptsConfig = {
  voice: { version: 'v2', model: 'turn-kit-en' },
  render: 'first_use',
  formats: [{ encoding: 'mulaw', sampleRate: 8000 }],
  texts: { ...DEFAULT_PROMPT_TEXTS },
};
/** What the service renders: 0.4 s of a μ-law pattern no bundled recording has. */
const RENDERED = Buffer.from(Array.from({ length: 3200 }, (_, i) => 0x10 + (i % 7)));

let agent: FakeAgent | undefined;
let server: TestServer | undefined;
let speech: FakeSpeech | undefined;
let cacheDir: string | undefined;

afterEach(async () => {
  await server?.close();
  await agent?.close();
  await speech?.close();
  if (cacheDir) rmSync(cacheDir, { recursive: true, force: true });
  server = agent = speech = cacheDir = undefined;
});

async function start(speechUrl: string) {
  agent = await startFakeAgent();
  agent.refuseWith(401); // no agent will take any call
  cacheDir = mkdtempSync(join(tmpdir(), 'callbridge-prompt-cache-'));
  const configDir = writeConfigDir({
    default: {
      prompt: 'You are a test agent.',
      think: { provider: { type: 'open_ai', model: 'gpt-4o-mini' } },
    },
  });
  writeFileSync(join(configDir, 'prompts.json'), JSON.stringify({ voice: VOICE.voice }));
  server = await startServer(
    { AGENT_URL: agent.url, AGENT_API_KEY: 'key', AGENT_PREWARM: 'false', CONFIG_DIR: configDir },
    {
      prompts: () =>
        new PromptAudio({
          config: VOICE,
          api: { baseUrl: speechUrl, authorization: 'Token key', timeoutMs: 1_000 },
          cacheDir: cacheDir!,
          logger: pino({ level: 'silent' }),
        }),
    },
  );
}

/** A call no agent takes: what the caller heard before the hang-up. */
async function heardWithoutAgent(): Promise<Buffer> {
  const callSid = newCallSid();
  const answer = await voiceWebhook(server!.baseUrl, { CallSid: callSid, From: '+15005550006', To: '+1555' });
  const carrier = await openMediaStream(answer.streamUrl, { callSid });
  carrier.start(answer.parameters);
  await carrier.closed;
  expect((await server!.store.getCallRecord(callSid))?.endReason).toBe('agent_unreachable');
  return carrier.audio();
}

describe('the "unavailable" prompt on a call', () => {
  it('is rendered once by the speak endpoint, then reused from the cache', async () => {
    speech = await startFakeSpeech();
    speech.always('/v2/speak', { status: 200, body: writeWavEncoded(RENDERED, 'mulaw', 8000) });
    await start(speech.url);
    expect((await heardWithoutAgent()).equals(RENDERED)).toBe(true);
    expect((await heardWithoutAgent()).equals(RENDERED)).toBe(true);
    const speaks = speech.requests.filter((r) => r.path === '/v2/speak');
    expect(speaks).toHaveLength(1);
    expect(speaks[0]!.query.get('model')).toBe('turn-kit-en');
    expect(speaks[0]!.query.get('encoding')).toBe('mulaw');
  });

  it('falls back to the bundled recording when the speech service is down', async () => {
    const gone = await startFakeSpeech();
    const url = gone.url;
    await gone.close();
    await start(url);
    const bundled = readFileSync(BUNDLED_PROMPTS.unavailable!);
    expect((await heardWithoutAgent()).equals(bundled)).toBe(true);
  });
});

describe('the decline at the voice webhook', () => {
  it('plays the rendered decline through the carrier instead of speaking text', async () => {
    speech = await startFakeSpeech();
    speech.always('/v2/speak', { status: 200, body: writeWavEncoded(RENDERED, 'mulaw', 8000) });
    await start(speech.url);
    server!.app.callbridge.draining = true;
    const declined = await voiceWebhook(server!.baseUrl, {
      CallSid: newCallSid(),
      From: '+1555',
      To: '+1666',
    });
    const audioUrl = `${server!.baseUrl}/prompts/at_capacity.wav`;
    expect(declined.body).toContain(`<Play>${audioUrl}</Play><Hangup/>`);
    expect(declined.body).not.toContain('<Say>');
    expect(readTwimlAnswer(declined.body)).toMatchObject({
      kind: 'declined',
      say: `(the recording at ${audioUrl})`,
    });
    for (let i = 0; i < 2; i++) {
      const fetched = await fetch(audioUrl);
      expect(fetched.status).toBe(200);
      expect(fetched.headers.get('content-type')).toBe('audio/wav');
      const wav = readWav(Buffer.from(await fetched.arrayBuffer()));
      expect(wav.sampleRate).toBe(8000);
      expect(wav.samples).toHaveLength(RENDERED.length);
    }
    const speaks = speech.requests.filter((r) => r.path === '/v2/speak');
    expect(speaks).toHaveLength(1);
    expect(speaks[0]!.body).toContain("we can't take your call");
  });
});
