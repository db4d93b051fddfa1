// Retention on a fake clock: a recording is removed by the server's own sweep once its
// `retentionDays` have passed, not a sweep earlier, and a younger one stays.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import pino from 'pino';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { realClock } from '../../src/call/clock.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { FileRecordingStore } from '../../src/recording/file-store.js';
import { Recordings } from '../../src/recording/recordings.js';

const HOUR_MS = 3_600_000;
const FORMAT = { encoding: 'mulaw', sampleRate: 8000, channels: 1 } as const;

let dir: string;
let recordings: Recordings;

beforeEach(() => {
  vi.useFakeTimers({ now: Date.parse('2026-01-01T00:00:00Z') });
  dir = mkdtempSync(join(tmpdir(), 'callbridge-retention-'));
  recordings = new Recordings({
    store: new FileRecordingStore(dir),
    metrics: createMetrics('global'),
    logger: pino({ level: 'silent' }),
  });
});

afterEach(async () => {
  await recordings.close();
  vi.useRealTimers();
  rmSync(dir, { recursive: true, force: true });
});

async function recordCall(callSid: string, retentionDays: number): Promise<void> {
  const recorder = recordings.start(
    callSid,
    FORMAT,
    { enabled: true, consent: null, retentionDays },
    realClock,
  )!;
  recorder.callerFrame(Buffer.alloc(160, 0x7e), 20);
  await recordings.complete(callSid, recorder);
}

it('removes a recording once its retention has passed, by the hourly sweep', async () => {
  await recordCall('CA-short', 2);
  await recordCall('CA-long', 30);
  const store = recordings.store;
  expect(await store.size('CA-short')).not.toBeNull();
  recordings.startRetention(HOUR_MS);

  /** Moves the clock an hour at a time, each hour's sweep finished before the next. */
  const hours = async (n: number) => {
    for (let i = 0; i < n; i++) {
      await vi.advanceTimersByTimeAsync(HOUR_MS);
      await recordings.swept();
    }
  };
  await hours(47);
  expect(await store.size('CA-short')).not.toBeNull();
  await hours(1);
  expect(await store.size('CA-short')).toBeNull();
  expect(await store.size('CA-long')).not.toBeNull();

  await hours(28 * 24 - 1);
  expect(await store.size('CA-long')).not.toBeNull();
  await hours(1);
  expect(await store.size('CA-long')).toBeNull();
});

it('saves the record without waiting forever on a store that never completes the recording', async () => {
  const stuck = new Recordings({
    store: {
      kind: 'file',
      size: async () => null,
      read: async () => Readable.from([]),
      remove: async () => false,
      removeExpired: async () => [],
      close: async () => {},
      begin: () => ({
        write() {},
        rewriteStart() {},
        pendingBytes: 0,
        end: () => new Promise<void>(() => {}),
        abort: async () => {},
      }),
    },
    metrics: createMetrics('global'),
    logger: pino({ level: 'silent' }),
    completeTimeoutMs: 5_000,
  });
  const recorder = stuck.start(
    'CA-stuck',
    FORMAT,
    { enabled: true, consent: null, retentionDays: 1 },
    realClock,
  )!;
  const done = stuck.completeCall('CA-stuck');
  await vi.advanceTimersByTimeAsync(5_000);
  expect((await done)?.state).toBe('failed');
  expect(recorder.state).not.toBe('ready');
  await stuck.close();
});
