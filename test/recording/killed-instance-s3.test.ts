// With the S3 store, a call whose instance is killed mid-call is not lost: the real entry point
// spools the recording under its DATA_DIR, is killed with SIGKILL while the caller talks (no
// object in the bucket then), and once started again on the same DATA_DIR it uploads a WAV whose
// header gives its true size and whose left channel is the caller's frames.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { afterEach, beforeAll, expect, it } from 'vitest';
import { decodeMulaw } from '../../src/audio/codec.js';
import { S3RecordingStore } from '../../src/recording/s3-store.js';
import { writeConfigDir } from '../helpers/config-dir.js';
import { type FakeAgent, startFakeAgent } from '../helpers/fake-agent.js';
import { S3_TEST_CREDENTIALS, type S3Server, startS3Server } from '../helpers/s3-server.js';
import { ensureBuilt, type ServerProcess, spawnServer } from '../helpers/server-process.js';
import { answeredCall } from '../helpers/twilio-carrier.js';
import { readStereoWav } from '../helpers/wav-stereo.js';

let agent: FakeAgent | undefined;
let servers: ServerProcess[] = [];
let s3: S3Server | undefined;
let dirs: string[] = [];

beforeAll(async () => {
  await ensureBuilt();
}, 180_000);

afterEach(async () => {
  for (const server of servers) await server.dispose();
  await agent?.close();
  await s3?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  servers = [];
  dirs = [];
  agent = s3 = undefined;
});

it('uploads, once the instance is started again, the recording it was writing when killed', async () => {
  agent = await startFakeAgent();
  s3 = await startS3Server();
  const configDir = writeConfigDir({
    support: {
      prompt: 'You answer the phone.',
      think: { provider: { type: 'open_ai', model: 'gpt-4o-mini' } },
      recording: { enabled: true, consent: null },
    },
  });
  const dataDir = mkdtempSync(join(tmpdir(), 'callbridge-s3-killed-'));
  dirs.push(configDir, dataDir);
  const env = {
    AGENT_URL: agent.url,
    AGENT_API_KEY: 'test-agent-key',
    CONFIG_DIR: configDir,
    DATA_DIR: dataDir,
    RECORDING_STORE: 's3',
    S3_BUCKET: s3.bucket,
    S3_ENDPOINT: s3.endpoint,
    S3_FORCE_PATH_STYLE: 'true',
    AWS_ACCESS_KEY_ID: S3_TEST_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: S3_TEST_CREDENTIALS.secretAccessKey,
  };
  const first = await spawnServer(env);
  servers.push(first);
  const { callSid, carrier } = await answeredCall(first.baseUrl, agent);

  // Four seconds of caller audio in real time, then the instance dies without a word.
  const frames: Buffer[] = [];
  for (let i = 0; i < 200; i++) {
    const frame = Buffer.alloc(160, 0x10 + (i % 0x60));
    frames.push(frame);
    carrier.media(frame);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await first.kill('SIGKILL');

  const store = new S3RecordingStore(s3.config());
  try {
    // Four seconds are less than a part: nothing reached the bucket, all of it is in the spool.
    expect(await store.size(callSid)).toBeNull();
    expect(existsSync(join(dataDir, 'recordings-spool', `${callSid}.wav`))).toBe(true);

    const second = await spawnServer(env);
    servers.push(second);
    let size: number | null = null;
    for (let tries = 0; tries < 150 && size === null; tries++) {
      size = await store.size(callSid);
      if (size === null) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(size, second.output()).not.toBeNull();
    const file = await buffer(await store.read(callSid, 0, size! - 1));
    const wav = readStereoWav(file);
    expect(wav).toMatchObject({ sampleRate: 8000, channels: 2, bitsPerSample: 16 });
    expect(wav.declaredDataBytes).toBe(file.length - 44);
    expect(wav.left.length).toBeGreaterThanOrEqual(2 * 8000);
    const firstSound = wav.left.findIndex((s) => s !== 0);
    const caller = decodeMulaw(Buffer.concat(frames));
    expect([...wav.left.subarray(firstSound, firstSound + 1600)]).toEqual([...caller.subarray(0, 1600)]);
    expect(readdirSync(join(dataDir, 'recordings-spool'))).toEqual([]);
  } finally {
    await store.close();
  }
}, 90_000);
