// The answering machine of an outbound call on fake timers, with a fake host (which closes the
// agent for it) and a fake way to speak or play: the silence the agent hears instead of a
// greeting, the verdicts and the one that never comes, the voicemail left (recording, rendered
// text, agent) or not, and what the call's record says of it.
import type { Counter } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { MediaFormat } from '../../../src/audio/format.js';
import type { VerdictReport } from '../../../src/call/outbound/amd-gate.js';
import {
  AMD_VERDICT_TIMEOUT_MS,
  AnsweringMachine,
  VOICEMAIL_CAP_MS,
} from '../../../src/call/outbound/answering-machine.js';
import { realClock } from '../../../src/call/clock.js';
import type { EndReason } from '../../../src/call/record/end-reason.js';
import type { Ending, Said } from '../../../src/call/session/endings.js';
import type { OutboundAmd } from '../../../src/call/outbound/outbound-context.js';
import { createMetrics, type Metrics } from '../../../src/metrics/metrics.js';
import { silentLogger } from '../../helpers/call-fakes.js';

const MULAW_8K: MediaFormat = { encoding: 'mulaw', sampleRate: 8000, channels: 1 };
const RECORDING = Buffer.alloc(1600, 0x42);
const VOICED = Buffer.alloc(160, 0x00);

let metrics: Metrics;
let endings: Ending[];
let ended: EndReason[];
let agentClosed: boolean;
let spoken: string[];
let played: Array<{ bytes: number; capMs: number }>;
let hearing: { callerSpeaking: boolean; silenceMs: number };
let said: Said;

function machine(amd: Partial<OutboundAmd> = {}, opts: { recording?: Buffer | null } = {}) {
  return new AnsweringMachine({
    outbound: {
      attemptId: 'a1',
      campaignId: 'camp',
      contact: 3,
      profile: 'default',
      variables: {},
      amd: { mode: 'voicemail', voicemailText: 'Hi, call us back.', voicemailAudioUrl: null, ...amd },
    },
    carrier: 'twilio',
    format: MULAW_8K,
    clock: realClock,
    answeredAtMs: performance.now(),
    metrics,
    logger: silentLogger(),
    host: {
      begin: (ending) => {
        if (endings.length > 0 || ended.length > 0) return false;
        endings.push(ending);
        return true;
      },
      end: (reason) => {
        if (ended.length === 0) ended.push(reason);
      },
      get isEnding() {
        return ended.length > 0;
      },
      closeAgent: () => {
        agentClosed = true;
      },
    },
    hearing,
    speech: {
      say: async (text) => {
        spoken.push(text);
        return said;
      },
      play: async (audio, capMs) => {
        played.push({ bytes: audio.length, capMs });
        return 'played';
      },
    },
    downlink: { lastWordsHeard: async () => {} },
    ...(opts.recording !== undefined
      ? {
          voicemailRecordings: async () =>
            opts.recording ? { audio: opts.recording } : { problem: 'the recording answered HTTP 404' },
        }
      : {}),
  });
}

const report = (
  verdict: VerdictReport['verdict'],
  messageEnded = false,
  raw: string = verdict,
): VerdictReport => ({
  verdict,
  messageEnded,
  detectionMs: 1500,
  raw,
});

async function count(counter: Counter<string>, labels: Record<string, string>): Promise<number> {
  const { values } = await counter.get();
  return values
    .filter((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want))
    .reduce((n, v) => n + v.value, 0);
}

const settle = () => vi.advanceTimersByTimeAsync(0);

beforeEach(() => {
  vi.useFakeTimers();
  metrics = createMetrics('test');
  endings = [];
  ended = [];
  agentClosed = false;
  spoken = [];
  played = [];
  hearing = { callerSpeaking: false, silenceMs: 0 };
  said = 'started';
});

afterEach(() => {
  vi.useRealTimers();
});

describe('until the verdict', () => {
  it('the agent hears silence of the same size in place of the answerer, and its output is held', () => {
    const m = machine();
    const heard = m.screen(VOICED);
    expect(heard).not.toBe(VOICED);
    expect(heard.length).toBe(160);
    expect(heard.every((b) => b === 0xff)).toBe(true); // μ-law silence
    const released: string[] = [];
    expect(m.withholds(() => released.push('audio'), 160)).toBe(true);
    expect(m.holdsText(() => released.push('text'))).toBe(true);
    m.verdictReported(report('human'));
    expect(released).toEqual(['audio', 'text']);
    expect(m.personAnswered).toBe(true);
    expect(m.screen(VOICED)).toBe(VOICED); // the person is heard as they are
    expect(m.withholds(() => {}, 160)).toBe(false);
  });

  it('no verdict in time is a person, counted as unknown', async () => {
    const m = machine();
    await vi.advanceTimersByTimeAsync(AMD_VERDICT_TIMEOUT_MS);
    expect(m.personAnswered).toBe(true);
    expect(m.verdict).toMatchObject({ verdict: 'unknown', raw: 'timeout' });
    expect(await count(metrics.amdVerdicts, { verdict: 'unknown' })).toBe(1);
    expect(ended).toEqual([]);
  });

  it('a verdict after the call ended changes nothing', () => {
    const m = machine();
    ended.push('caller_hangup');
    m.verdictReported(report('machine', true));
    expect(m.verdict).toBeNull();
    expect(endings).toEqual([]);
  });
});

describe('a machine', () => {
  it('in hang-up mode ends the call as machine, the verdict counted once', async () => {
    const m = machine({ mode: 'hangup' });
    m.verdictReported(report('machine', false, 'machine_start'));
    m.verdictReported(report('machine', true, 'machine_end_beep'));
    expect(ended).toEqual(['machine']);
    expect(await count(metrics.amdVerdicts, { verdict: 'machine' })).toBe(1);
  });

  it('whose greeting falls silent leaves the message then, spoken by the agent, and the record says so', async () => {
    const m = machine();
    m.verdictReported(report('machine', false, 'machine_start'));
    hearing.callerSpeaking = true;
    m.screen(VOICED);
    hearing.callerSpeaking = false;
    hearing.silenceMs = 5_000;
    m.screen(VOICED);
    await settle();
    expect(endings).toEqual([{ kind: 'voicemail', reason: 'voicemail_left' }]);
    expect(spoken).toEqual(['Hi, call us back.']);
    expect(ended).toEqual(['voicemail_left']);
    expect(m.voicemail).toEqual({ left: 'agent', problem: null });
  });

  it('while the message is asked for, the agent output is dropped until the reply that speaks it starts', () => {
    const m = machine();
    m.verdictReported(report('machine', true, 'machine_end_beep'));
    const out: string[] = [];
    expect(m.withholds(() => out.push('old audio'), 160)).toBe(true);
    expect(m.withholds(() => out.push('started'), 0, true)).toBe(false);
    expect(m.withholds(() => out.push('new audio'), 160)).toBe(false);
    expect(out).toEqual([]); // dropped, not held
  });

  it('plays a recording at the audio URL with the agent closed, bounded by the voicemail cap', async () => {
    const m = machine({ voicemailAudioUrl: 'https://example.test/vm.wav' }, { recording: RECORDING });
    m.verdictReported(report('machine', true, 'machine_end_beep'));
    await settle();
    expect(agentClosed).toBe(true);
    expect(played).toEqual([{ bytes: RECORDING.length, capMs: VOICEMAIL_CAP_MS }]);
    expect(ended).toEqual(['voicemail_left']);
    expect(m.voicemail).toEqual({ left: 'recording', problem: null });
  });

  it('with a recording that cannot be played and no text, hangs up as machine with the reason', async () => {
    const m = machine(
      { voicemailAudioUrl: 'https://example.test/missing.wav', voicemailText: null },
      { recording: null },
    );
    m.verdictReported(report('machine', true, 'machine_end_beep'));
    await settle();
    expect(spoken).toEqual([]);
    expect(ended).toEqual(['machine']);
    expect(m.voicemail).toEqual({ left: null, problem: 'the recording answered HTTP 404' });
  });

  it('whose message the agent refuses to speak hangs up as machine', async () => {
    said = 'refused';
    const m = machine();
    m.verdictReported(report('machine', true, 'machine_end_beep'));
    await settle();
    expect(ended).toEqual(['machine']);
    expect(m.voicemail).toEqual({ left: null, problem: 'the agent refused to speak the voicemail' });
  });

  it('that never ends its greeting gets the message at the verdict timeout', async () => {
    machine().verdictReported(report('machine', false, 'machine_start'));
    await vi.advanceTimersByTimeAsync(AMD_VERDICT_TIMEOUT_MS);
    expect(spoken).toEqual(['Hi, call us back.']);
    expect(ended).toEqual(['voicemail_left']);
  });
});
