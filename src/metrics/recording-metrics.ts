// Call recordings (docs/recordings.md): `store` is file or s3, `outcome` ready, failed or deleted.
import { Counter, Histogram, type Registry } from 'prom-client';

export function recordingMetrics(r: Registry[]) {
  return {
    recordings: new Counter({
      name: 'callbridge_recordings_total',
      help: 'Call recordings finished, by store and outcome (ready: stored whole; failed: given up; deleted: deleted during the call).',
      labelNames: ['store', 'outcome'],
      registers: r,
    }),
    recordingBytes: new Counter({
      name: 'callbridge_recording_bytes_total',
      help: 'Bytes of call recordings written to the store, by store.',
      labelNames: ['store'],
      registers: r,
    }),
    recordingUpload: new Histogram({
      name: 'callbridge_recording_upload_seconds',
      help: "From a call's end to its recording complete in the store (the last writes and, for s3, the multipart completion).",
      labelNames: ['store'],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
      registers: r,
    }),
    recordingFailures: new Counter({
      name: 'callbridge_recording_failures_total',
      help: 'Recording failures, by store and stage (begin, write, abandoned: no consent played, complete, retention).',
      labelNames: ['store', 'stage'],
      registers: r,
    }),
  };
}
