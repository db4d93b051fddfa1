// The store `RECORDING_STORE` names (docs/recordings.md).
import type { RecordingStoreConfig } from '../config/recording.js';
import { FileRecordingStore } from './file-store.js';
import { S3RecordingStore } from './s3-store.js';
import type { RecordingStore } from './store.js';

export function openRecordingStore(config: RecordingStoreConfig): RecordingStore {
  return config.kind === 'file' ? new FileRecordingStore(config.dir) : new S3RecordingStore(config);
}
