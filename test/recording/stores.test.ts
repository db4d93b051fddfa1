// The recording store contract on both stores: files under a folder, and an S3-compatible server
// (s3rver) on an ephemeral port. Then what only the file store does: modes and header rewrites.
import { mkdtempSync, rmSync, statSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileRecordingStore } from '../../src/recording/file-store.js';
import { S3RecordingStore } from '../../src/recording/s3-store.js';
import { type S3Server, startS3Server } from '../helpers/s3-server.js';
import { recordingStoreContract } from './store-contract.js';

let s3: S3Server;
let prefixes = 0;

beforeAll(async () => {
  s3 = await startS3Server();
});

afterAll(async () => {
  await s3.close();
});

recordingStoreContract('file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'callbridge-recordings-'));
  const store = new FileRecordingStore(join(dir, 'recordings'));
  return { store, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
});

recordingStoreContract('s3', async () => {
  // A prefix per test keeps each one's recordings and expiries apart in the one bucket.
  const store = new S3RecordingStore(s3.config(`t${++prefixes}/recordings/`));
  return { store, cleanup: () => store.close() };
});

describe('the file store', () => {
  it('keeps recordings private: the folder 0700, each file 0600', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'callbridge-recordings-'));
    try {
      const store = new FileRecordingStore(join(dir, 'recordings'));
      const upload = store.begin('CA-private', 1);
      upload.write(Buffer.alloc(10));
      await upload.end();
      expect(statSync(join(dir, 'recordings')).mode & 0o777).toBe(0o700);
      expect(statSync(join(dir, 'recordings', 'CA-private.wav')).mode & 0o777).toBe(0o600);
      expect(statSync(join(dir, 'recordings', 'CA-private.json')).mode & 0o777).toBe(0o600);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rewrites the start of the file in place as the recording grows', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'callbridge-recordings-'));
    try {
      const store = new FileRecordingStore(dir);
      const upload = store.begin('CA-header', 1);
      upload.write(Buffer.from('aaaa'));
      upload.write(Buffer.from('bbbb'));
      upload.rewriteStart(Buffer.from('XY'));
      await upload.end();
      expect(readFileSync(join(dir, 'CA-header.wav'), 'utf8')).toBe('XYaabbbb');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
