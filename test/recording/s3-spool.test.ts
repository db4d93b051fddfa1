// An S3 recording whose instance dies mid-call is not lost: the store spools it under the
// instance's data folder (0600) while parts stream, and the next store started on that folder
// uploads what was written as a WAV whose header gives its true sizes, then removes the spool.
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { S3RecordingStore } from '../../src/recording/s3-store.js';
import { wavHeader } from '../../src/recording/wav-header.js';
import { type S3Server, startS3Server } from '../helpers/s3-server.js';
import { readStereoWav } from '../helpers/wav-stereo.js';

let s3: S3Server;
let dir: string;

beforeAll(async () => {
  s3 = await startS3Server();
  dir = mkdtempSync(join(tmpdir(), 'callbridge-spool-'));
});

afterAll(async () => {
  await s3.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Stereo frames: left counts up from `at`, right is its negative. */
function frames(at: number, count: number): Buffer {
  const bytes = Buffer.alloc(count * 4);
  for (let i = 0; i < count; i++) {
    bytes.writeInt16LE((at + i) % 30000, i * 4);
    bytes.writeInt16LE(-((at + i) % 30000), i * 4 + 2);
  }
  return bytes;
}

async function untilSize(path: string, size: number): Promise<void> {
  for (let tries = 0; tries < 200; tries++) {
    if (existsSync(path) && statSync(path).size === size) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`${path} never reached ${size} bytes`);
}

it('uploads, at the next start, the part of a recording written before the instance died', async () => {
  const spoolDir = join(dir, 'recordings-spool');
  const config = s3.config('killed/recordings/');
  const callSid = 'CA-killed-mid-call';
  const expiresAtMs = Date.now() + 86_400_000;

  const dying = new S3RecordingStore(config, { spoolDir });
  const upload = dying.begin(callSid, expiresAtMs);
  upload.write(wavHeader(8000, null));
  upload.write(frames(0, 8000));
  upload.write(frames(8000, 4000));
  upload.rewriteStart(wavHeader(8000, 12000 * 4));
  // Half a frame, as a write cut short by the death would leave.
  upload.write(Buffer.from([1, 2]));
  const spooled = join(spoolDir, `${callSid}.wav`);
  await untilSize(spooled, 44 + 12000 * 4 + 2);
  expect(statSync(spooled).mode & 0o777).toBe(0o600);
  expect(statSync(spoolDir).mode & 0o777).toBe(0o700);
  // The death: nothing ends the upload; the bucket has no object.
  expect(await dying.size(callSid)).toBeNull();

  const next = new S3RecordingStore(config, { spoolDir });
  try {
    expect(await next.recoverSpooled()).toEqual([callSid]);
    expect(await next.size(callSid)).toBe(44 + 12000 * 4);
    const stored = await buffer(await next.read(callSid, 0, 44 + 12000 * 4 - 1));
    // The header's sizes are the true ones, not the streaming placeholder.
    expect(stored.readUInt32LE(4)).toBe(36 + 12000 * 4);
    expect(stored.readUInt32LE(40)).toBe(12000 * 4);
    const wav = readStereoWav(stored);
    expect(wav.sampleRate).toBe(8000);
    expect(Buffer.from(stored.subarray(44))).toEqual(Buffer.concat([frames(0, 8000), frames(8000, 4000)]));
    expect(wav.left.length).toBe(12000);
    expect(readdirSync(spoolDir)).toEqual([]);
    // Its retention was kept: it expires like any other.
    expect(await next.removeExpired(expiresAtMs, 10)).toEqual([callSid]);
  } finally {
    await next.close();
    await dying.close();
  }
});

it('leaves the spool of a recording being written, and removes it once its upload completed', async () => {
  const spoolDir = join(dir, 'done-spool');
  const store = new S3RecordingStore(s3.config('done/recordings/'), { spoolDir });
  try {
    const upload = store.begin('CA-finished', Date.now() + 60_000);
    upload.write(wavHeader(8000, null));
    upload.write(frames(0, 800));
    // A recording still being written is this run's, not a previous one's: recovery leaves it.
    await untilSize(join(spoolDir, 'CA-finished.wav'), 44 + 3200);
    expect(await store.recoverSpooled()).toEqual([]);
    expect(readdirSync(spoolDir).sort()).toEqual(['CA-finished.json', 'CA-finished.wav']);
    await upload.end();
    expect(await store.size('CA-finished')).toBe(44 + 3200);
    expect(readdirSync(spoolDir)).toEqual([]);
    expect(await store.recoverSpooled()).toEqual([]);
  } finally {
    await store.close();
  }
});
