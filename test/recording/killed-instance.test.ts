// A call whose instance is killed mid-call leaves a playable recording of what was written: the
// real entry point records to the file store, is killed with SIGKILL while the caller talks, and
// the file on disk reads as a WAV whose left channel is the caller's frames, missing at most the
// last seconds.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, expect, it } from 'vitest';
import { decodeMulaw } from '../../src/audio/codec.js';
import { writeConfigDir } from '../helpers/config-dir.js';
import { type FakeAgent, startFakeAgent } from '../helpers/fake-agent.js';
import { ensureBuilt, type ServerProcess, spawnServer } from '../helpers/server-process.js';
import { answeredCall } from '../helpers/twilio-carrier.js';
import { readStereoWav } from '../helpers/wav-stereo.js';

let agent: FakeAgent | undefined;
let server: ServerProcess | undefined;
let configDir: string | undefined;

beforeAll(async () => {
  await ensureBuilt();
}, 180_000);

afterEach(async () => {
  await server?.dispose();
  await agent?.close();
  if (configDir) rmSync(configDir, { recursive: true, force: true });
  server = agent = configDir = undefined;
});

it('leaves a WAV that plays the part written when the process dies mid-call', async () => {
  agent = await startFakeAgent();
  configDir = writeConfigDir({
    support: {
      prompt: 'You answer the phone.',
      think: { provider: { type: 'open_ai', model: 'gpt-4o-mini' } },
      recording: { enabled: true, consent: null },
    },
  });
  server = await spawnServer({
    AGENT_URL: agent.url,
    AGENT_API_KEY: 'test-agent-key',
    CONFIG_DIR: configDir,
  });
  const { callSid, carrier } = await answeredCall(server.baseUrl, agent);

  // Four seconds of caller audio in real time, then the instance dies without a word.
  const frames: Buffer[] = [];
  for (let i = 0; i < 200; i++) {
    const frame = Buffer.alloc(160, 0x10 + (i % 0x60));
    frames.push(frame);
    carrier.media(frame);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await server.kill('SIGKILL');

  const file = readFileSync(join(server.dataDir, 'recordings', `${callSid}.wav`));
  const wav = readStereoWav(file);
  expect(wav).toMatchObject({ sampleRate: 8000, channels: 2, bitsPerSample: 16 });
  // The header names what was written (a size, or "to the end" before the first rewrite).
  expect(wav.declaredDataBytes === 0xffffffff || wav.declaredDataBytes <= file.length - 44).toBe(true);
  // Written once a second, half a second behind: at least two of the four seconds are there.
  expect(wav.left.length).toBeGreaterThanOrEqual(2 * 8000);
  const first = wav.left.findIndex((s) => s !== 0);
  const caller = decodeMulaw(Buffer.concat(frames));
  const heard = wav.left.subarray(first);
  // Frames sent on a timer arrive with jitter; those the recorder placed back to back match exactly.
  expect([...heard.subarray(0, 1600)]).toEqual([...caller.subarray(0, 1600)]);
}, 60_000);
