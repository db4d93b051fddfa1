// The store `RECORDING_STORE` names, and the recordings service on it (docs/recordings.md). The S3
// client is loaded only when the S3 store is asked for: an instance keeping recordings on disk
// never loads the AWS SDK.
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { RecordingStoreConfig } from '../config/recording.js';
import type { Config } from '../config/types.js';
import type { Metrics } from '../metrics/metrics.js';
import { FileRecordingStore } from './file-store.js';
import { Recordings } from './recordings.js';
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

/**
 * The recordings service on `RECORDING_STORE`. With S3, a recording is spooled under
 * `$DATA_DIR/recordings-spool` while it streams, and what a previous run of this instance left
 * there is uploaded now, in the background (docs/recordings.md).
 */
export async function openRecordings(config: Config, metrics: Metrics, logger: Logger): Promise<Recordings> {
  const log = logger.child({ component: 'recordings' });
  const store = await openRecordingStore(
    config.recordings ?? { kind: 'file', dir: join(config.dataDir, 'recordings') },
    { spoolDir: join(config.dataDir, 'recordings-spool') },
  );
  store.recoverSpooled?.().then(
    (callSids) => {
      if (callSids.length > 0) log.info({ callSids }, 'uploaded recordings a previous run left unfinished');
    },
    (err: Error) => log.warn({ err: err.message }, 'could not upload the recordings a previous run left'),
  );
  return new Recordings({ store, metrics, logger: log });
}
