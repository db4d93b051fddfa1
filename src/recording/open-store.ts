// The store `RECORDING_STORE` names (docs/recordings.md). The S3 client is loaded only when the S3
// store is asked for: an instance keeping recordings on disk never loads the AWS SDK.
import type { RecordingStoreConfig } from '../config/recording.js';
import { FileRecordingStore } from './file-store.js';
import type { RecordingStore } from './store.js';

export async function openRecordingStore(config: RecordingStoreConfig): Promise<RecordingStore> {
  if (config.kind === 'file') return new FileRecordingStore(config.dir);
  const { S3RecordingStore } = await import('./s3-store.js');
  return new S3RecordingStore(config);
}
