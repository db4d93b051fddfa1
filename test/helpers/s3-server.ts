// One S3-compatible server (s3rver) per test file, on an ephemeral port with a bucket ready, and the
// store configuration that reaches it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import type { RecordingStoreConfig } from '../../src/config/recording.js';

export interface S3Server {
  endpoint: string;
  bucket: string;
  /** Where s3rver keeps the bucket's objects and unfinished uploads' parts. */
  directory: string;
  /** The store configuration for this server, under `prefix`. */
  config(prefix?: string): Extract<RecordingStoreConfig, { kind: 's3' }>;
  close(): Promise<void>;
}

export const S3_TEST_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export async function startS3Server(bucket = 'recordings-test'): Promise<S3Server> {
  const directory = mkdtempSync(join(tmpdir(), 'callbridge-s3-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    directory,
    silent: true,
    configureBuckets: [{ name: bucket }],
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    directory,
    config: (prefix = 'recordings/') => ({
      kind: 's3',
      bucket,
      prefix,
      region: 'us-east-1',
      endpoint,
      forcePathStyle: true,
      credentials: S3_TEST_CREDENTIALS,
    }),
    async close() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
