// The finished S3 object of a recording is a WAV with its exact sizes, as anything that takes it from
// the bucket reads it (not only callbridge's route, which could patch the header): a short call
// stored whole, a longer one as a multipart upload whose first part, holding the header, is sent
// last, while the parts after it go out as the call runs. Against an S3-compatible server (s3rver).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3RecordingStore } from '../../src/recording/s3-store.js';
import { PART_BYTES } from '../../src/recording/s3-upload.js';
import { WAV_HEADER_BYTES, wavHeader } from '../../src/recording/wav-header.js';
import { S3_TEST_CREDENTIALS, type S3Server, startS3Server } from '../helpers/s3-server.js';

const RATE = 8000;
const CHUNK = 64 * 1024;

let s3: S3Server;
let client: S3Client;
let prefixes = 0;

beforeAll(async () => {
  s3 = await startS3Server();
  client = new S3Client({
    region: 'us-east-1',
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: S3_TEST_CREDENTIALS,
  });
});

afterAll(async () => {
  client?.destroy();
  await s3?.close();
});

/** Samples whose every byte says where it is, so a part out of place shows. */
function samples(bytes: number, seed: number): Buffer {
  const out = Buffer.allocUnsafe(bytes);
  for (let i = 0; i < bytes; i++) out[i] = (i * 7 + seed + Math.floor(i / 65_521)) & 0xff;
  return out;
}

async function object(key: string): Promise<Buffer> {
  const answer = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
  return Buffer.from(await answer.Body!.transformToByteArray());
}

/**
 * Records `dataBytes` of samples as the recorder does: the header with the sizes unknown first, then
 * audio, each write followed by the header with the sizes so far. `during` runs before the end.
 */
async function record(dataBytes: number, during?: (key: string) => Promise<void>) {
  const prefix = `h${++prefixes}/`;
  const store = new S3RecordingStore(s3.config(prefix));
  const callSid = `CA-header-${prefixes}`;
  const upload = store.begin(callSid, 9e12);
  const audio = samples(dataBytes, prefixes);
  upload.write(wavHeader(RATE, null));
  for (let at = 0; at < audio.length; at += CHUNK) {
    upload.write(audio.subarray(at, at + CHUNK));
    upload.rewriteStart(wavHeader(RATE, Math.min(at + CHUNK, audio.length)));
  }
  const key = `${prefix}${callSid}.wav`;
  await during?.(key);
  await upload.end();
  await store.close();
  return { key, audio };
}

/**
 * The parts of unfinished multipart uploads s3rver holds (none of this test file runs two at once):
 * s3rver has no ListParts, so its folder of parts is read.
 */
function storedParts(): string[] {
  const parts: string[] = [];
  const walk = (dir: string, inUploads: boolean) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path, inUploads || entry.name.endsWith('uploads'));
      else if (inUploads && /^\d+$/.test(entry.name)) parts.push(entry.name);
    }
  };
  walk(s3.directory, false);
  return parts.sort();
}

function expectExactWav(stored: Buffer, audio: Buffer): void {
  expect(stored.length).toBe(WAV_HEADER_BYTES + audio.length);
  expect(stored.toString('latin1', 0, 4)).toBe('RIFF');
  expect(stored.readUInt32LE(4)).toBe(stored.length - 8);
  expect(stored.toString('latin1', 36, 40)).toBe('data');
  expect(stored.readUInt32LE(40)).toBe(audio.length);
  expect(stored.subarray(WAV_HEADER_BYTES).equals(audio)).toBe(true);
}

describe('the S3 object of a finished recording', () => {
  it('is a WAV with exact sizes for a short call, stored whole at its end', async () => {
    const { key, audio } = await record(3 * RATE * 4);
    expectExactWav(await object(key), audio);
  });

  it('is a WAV with exact sizes for a call of one to two parts', async () => {
    const { key, audio } = await record(PART_BYTES + 123 * 4);
    expectExactWav(await object(key), audio);
  });

  it('is a WAV with exact sizes for a long call, whose later parts went out while it ran', async () => {
    const { key, audio } = await record(3 * PART_BYTES + 1000 * 4, async () => {
      // Before the end: parts 2 and 3 stored, the header's part 1 still held back.
      await expect.poll(storedParts, { timeout: 10_000 }).toEqual(['2', '3']);
    });
    expectExactWav(await object(key), audio);
  }, 30_000);
});
