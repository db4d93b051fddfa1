// Which calls get a recorder: only those whose profile (with the call's or campaign's settings in
// it) asks for one. Every other call gets no listener at all, so its frames meet no recording work.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { AgentProfile } from '../../src/config/types.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { FileRecordingStore } from '../../src/recording/file-store.js';
import { Recordings } from '../../src/recording/recordings.js';
import { profileFixture } from '../outbound/rig.js';

const FORMAT = { encoding: 'mulaw', sampleRate: 8000, channels: 1 } as const;
let dir: string;
let recordings: Recordings;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'callbridge-recordings-'));
  recordings = new Recordings({
    store: new FileRecordingStore(dir),
    metrics: createMetrics('global'),
    logger: pino({ level: 'silent' }),
  });
});

afterEach(async () => {
  await recordings.close();
  rmSync(dir, { recursive: true, force: true });
});

const call = (callSid: string, profile: AgentProfile) => ({ callSid, mediaFormat: FORMAT, profile });

it('gives no recorder to a call whose profile does not ask for one, or asks for none', async () => {
  expect(recordings.recordCall(call('CA-plain', profileFixture()))).toBeNull();
  const off = { ...profileFixture(), recording: { enabled: false, consent: null, retentionDays: 30 } };
  expect(recordings.recordCall(call('CA-off', off))).toBeNull();
  expect(recordings.control('CA-plain', 'pause')).toBe('not_recorded');
  expect(await recordings.completeCall('CA-plain')).toBeNull();
  expect(await recordings.store.size('CA-plain')).toBeNull();
});

it('gives a recorder and a port to a recorded call, and forgets it once completed', async () => {
  const consent = { text: 'This call is recorded.' };
  const on = { ...profileFixture(), recording: { enabled: true, consent, retentionDays: 30 } };
  const recorded = recordings.recordCall(call('CA-on', on))!;
  expect(recorded.port.consent).toEqual(consent);
  expect(recorded.port.control('pause')).toBe('done');
  expect(recorded.port.control('pause')).toBe('unchanged');
  expect(recorded.port.control('resume')).toBe('done');
  const summary = await recordings.completeCall('CA-on');
  expect(summary?.state).toBe('ready');
  expect(summary?.pauses).toHaveLength(1);
  expect(recordings.control('CA-on', 'pause')).toBe('not_recorded');
  expect(await recordings.store.size('CA-on')).toBe(summary?.bytes);
});
