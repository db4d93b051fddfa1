// A recorded call, scripted end to end on fake timers: the session with a fake leg and a fake
// agent, the recorder on the session's audio seam, the file store. The recording holds the caller's
// frames exactly on the left; on the right the consent prompt first, then the agent's reply from
// when it played, cut where the caller barged in; a pause as silence on both; and the agent
// functions that pause and resume it.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { decodeMulaw } from '../../src/audio/codec.js';
import type { MediaFormat } from '../../src/audio/format.js';
import { RECORDED_CONSENT_TEXT } from '../../src/call/session/consent.js';
import { CallEventHub } from '../../src/call/watch/events.js';
import { type CallInfo, CallSession } from '../../src/call/session/session.js';
import type { RecordingSettings } from '../../src/config/recording.js';
import type { AgentProfile } from '../../src/config/types.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { FileRecordingStore } from '../../src/recording/file-store.js';
import { Recordings } from '../../src/recording/recordings.js';
import type { CallRecord } from '../../src/store/call-record.js';
import { type FakeDialer, type FakeLeg, fakeDialer, fakeLeg, silentLogger } from '../helpers/call-fakes.js';
import { readStereoWav } from '../helpers/wav-stereo.js';

const CALL_SID = 'CA-recorded-0001';
const MULAW_8K: MediaFormat = { encoding: 'mulaw', sampleRate: 8000, channels: 1 };
const CONSENT_URL = 'https://audio.example.com/consent.wav';
/** Half a second of consent prompt, 1.5 s of agent reply. */
const CONSENT = tone(4000, 3);
const REPLY = tone(12_000, 5);

const PROFILE: AgentProfile = {
  name: 'default',
  language: 'en',
  prompt: 'You are a test agent.',
  think: [{ provider: { type: 'open_ai', model: 'gpt-4o-mini' } }],
  builtins: { endCall: true, transferAllowList: [] },
  httpFunctions: [],
  dtmf: { enabled: false, interDigitTimeoutMs: 2000, terminator: '#', maxDigits: 20 },
  limits: { silencePromptMs: 0, silenceHangupMs: 0, maxCallMs: 0 },
  fallback: {},
  tags: [],
};

let dir: string;
let recordings: Recordings;
let leg: FakeLeg;
let dialer: FakeDialer;
let session: CallSession;
let records: CallRecord[];
/** Every caller frame sent, in order. */
let sent: Buffer[];

function tone(bytes: number, seed: number): Buffer {
  return Buffer.from(Array.from({ length: bytes }, (_, i) => (seed * 31 + i * 13) % 0x7f));
}

function startCall(recording: RecordingSettings): void {
  const info: CallInfo = {
    callSid: CALL_SID,
    streamSid: 'MZ-recorded-0001',
    carrier: 'twilio',
    direction: 'inbound',
    from: '+15005550006',
    to: '+15005550001',
    profileName: 'default',
    profile: { ...PROFILE, recording },
    mediaFormat: MULAW_8K,
  };
  const recorded = recordings.recordCall(info)!;
  leg = fakeLeg();
  dialer = fakeDialer();
  session = new CallSession(info, leg, {
    dial: (settings) => dialer.dial(settings),
    metrics: createMetrics('test'),
    logger: silentLogger(),
    events: new CallEventHub(),
    downlink: { frameBytes: 160 },
    maxEarlyAudioBytes: 64 * 1024,
    fallbackAudio: null,
    voicemailRecordings: async (url) =>
      url === CONSENT_URL ? { audio: CONSENT } : { problem: 'no such file' },
    audioListeners: [recorded.listener],
    recording: recorded.port,
    onEnded: (_s, record) => records.push(record),
  });
  void session.start();
}

/** The caller speaks for `ms` (a frame every 20 ms); the carrier echoes marks as it plays. */
async function talk(ms: number): Promise<void> {
  for (let t = 0; t < ms; t += 20) {
    await vi.advanceTimersByTimeAsync(20);
    const frame = tone(160, sent.length);
    sent.push(frame);
    session.onCallerAudio(frame);
    leg.echoMarks((name) => session.onMarkPlayed(name));
  }
}

async function finishCall(): Promise<ReturnType<typeof readStereoWav>> {
  session.end('caller_hangup');
  const summary = await recordings.completeCall(CALL_SID);
  expect(summary?.state).toBe('ready');
  return readStereoWav(readFileSync(join(dir, `${CALL_SID}.wav`)));
}

const silent = (samples: Int16Array) => samples.every((s) => s === 0);

beforeEach(() => {
  vi.useFakeTimers();
  dir = mkdtempSync(join(tmpdir(), 'callbridge-recorded-'));
  recordings = new Recordings({
    store: new FileRecordingStore(dir),
    metrics: createMetrics('test'),
    logger: silentLogger(),
  });
  records = [];
  sent = [];
});

afterEach(async () => {
  await recordings.close();
  vi.useRealTimers();
  rmSync(dir, { recursive: true, force: true });
});

it('records the caller exactly, the consent first, the reply from when it played, cut at the barge-in', async () => {
  startCall({ enabled: true, consent: { audioUrl: CONSENT_URL }, retentionDays: 30 });
  await talk(600); // the consent plays 0–500 ms and is heard; only then is the agent dialed
  expect(dialer.dials).toHaveLength(1);
  const agent = dialer.last();
  agent.ready();
  await talk(400);
  // At 1000 ms the agent answers with 1.5 s of audio, sent at once; the caller cuts in at 1800 ms.
  agent.say({ type: 'AgentStartedSpeaking' });
  agent.speak(REPLY);
  await talk(800);
  agent.say({ type: 'UserStartedSpeaking' });
  await talk(1000);
  const wav = await finishCall();

  expect(wav.left.length).toBe(sent.length * 160);
  expect([...wav.left]).toEqual([...decodeMulaw(Buffer.concat(sent))]);
  expect([...wav.right.subarray(0, 4000)]).toEqual([...decodeMulaw(CONSENT)]);
  expect(silent(wav.right.subarray(4000, 8000))).toBe(true);
  expect([...wav.right.subarray(8000, 14_400)]).toEqual([...decodeMulaw(REPLY.subarray(0, 6400))]);
  expect(silent(wav.right.subarray(14_400))).toBe(true);
  expect(records[0]?.endReason).toBe('caller_hangup');
});

it('writes a pause asked for by the agent as silence on both channels, and lists it', async () => {
  startCall({ enabled: true, consent: null, retentionDays: 30 });
  await vi.advanceTimersByTimeAsync(0);
  const agent = dialer.last();
  agent.ready();
  expect(JSON.stringify(dialer.dials[0]!.settings)).toContain('pause_recording');
  await talk(1000);
  agent.say({
    type: 'FunctionCallRequest',
    functions: [{ id: 'f1', name: 'pause_recording', arguments: '{}', client_side: true }],
  });
  await talk(1000);
  agent.say({
    type: 'FunctionCallRequest',
    functions: [{ id: 'f2', name: 'resume_recording', arguments: '{}', client_side: true }],
  });
  await talk(1000);
  const answers = agent.messages('FunctionCallResponse').map((m) => JSON.parse(String(m.content)));
  expect(answers).toEqual([
    { ok: true, note: 'The recording is paused.' },
    { ok: true, note: 'The recording has resumed.' },
  ]);
  const wav = await finishCall();
  const paused = { from: 8000, to: 16_000 };
  expect([...wav.left.subarray(0, paused.from)]).toEqual([...decodeMulaw(Buffer.concat(sent.slice(0, 50)))]);
  expect(silent(wav.left.subarray(paused.from, paused.to))).toBe(true);
  expect([...wav.left.subarray(paused.to)]).toEqual([...decodeMulaw(Buffer.concat(sent.slice(100)))]);
  expect(silent(wav.right)).toBe(true);
});

it('does not record a call whose consent prompt cannot be played', async () => {
  startCall({
    enabled: true,
    consent: { audioUrl: 'https://audio.example.com/missing.wav' },
    retentionDays: 30,
  });
  await talk(200);
  expect(dialer.dials).toHaveLength(1); // the call goes on with its agent
  session.end('caller_hangup');
  expect((await recordings.completeCall(CALL_SID))?.state).toBe('failed');
  expect(await recordings.store.size(CALL_SID)).toBeNull();
});

it('gives the consent prompt a turn of its own, so every reply is measured as itself', async () => {
  // Issue 30: each reply's heardMs was the one before it (the consent prompt shifted them by one).
  startCall({ enabled: true, consent: { audioUrl: CONSENT_URL }, retentionDays: 30 });
  await talk(600);
  const agent = dialer.last();
  agent.ready();
  await talk(200);
  agent.say({ type: 'AgentStartedSpeaking' });
  agent.say({ type: 'ConversationText', role: 'assistant', content: 'Hello, how can I help?' });
  agent.speak(REPLY);
  agent.say({ type: 'AgentAudioDone' });
  await talk(2000);
  await finishCall();
  const turns = records[0]!.turns;
  expect(turns.map((t) => [t.role, t.kind ?? null, t.content])).toEqual([
    ['assistant', 'consent', RECORDED_CONSENT_TEXT],
    ['assistant', null, 'Hello, how can I help?'],
  ]);
  expect(turns[0]!.heardMs).toBe(500);
  expect(turns[1]!.sentMs).toBe(1500);
  expect(turns[1]!.heardMs).toBe(1500);
});

it('stops a recording deleted while its call runs: nothing more written, its state deleted', async () => {
  // Issue 30: a recording deleted mid-call went on being written and ended `ready`.
  startCall({ enabled: true, consent: null, retentionDays: 30 });
  await vi.advanceTimersByTimeAsync(0);
  dialer.last().ready();
  await talk(3000);
  expect(recordings.control(CALL_SID, 'discard')).toBe('done');
  expect(recordings.control(CALL_SID, 'discard')).toBe('not_recorded');
  await talk(3000);
  session.end('caller_hangup');
  const summary = await recordings.completeCall(CALL_SID);
  expect(summary?.state).toBe('deleted');
  // Written every 2 s, 500 ms behind: what was written before the deletion, and nothing since.
  expect(summary?.durationMs).toBe(1_500);
  expect(await recordings.store.size(CALL_SID)).toBeNull();
});
