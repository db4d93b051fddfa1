// The store `RECORDING_STORE` names (docs/recordings.md). The S3 client is loaded only when the S3
// store is asked for: an instance keeping recordings on disk never loads the AWS SDK.
import type { RecordingStoreConfig } from '../config/recording.js';
import { FileRecordingStore } from './file-store.js';
import type { RecordingStore } from './store.js';

/**
 * `spoolDir`: where the S3 store keeps a local copy of each recording while it streams, and from
 * which it uploads, at start, what a previous run left (`recoverSpooled`).
 */
export async function openRecordingStore(
  config: RecordingStoreConfig,
  opts: { spoolDir?: string } = {},
): Promise<RecordingStore & { recoverSpooled?: () => Promise<string[]> }> {
  if (config.kind === 'file') return new FileRecordingStore(config.dir);
  const { S3RecordingStore } = await import('./s3-store.js');
  return new S3RecordingStore(config, opts);
}
