// The call log on fake timers: turns with replies cut to what was heard, the history a redial
// resumes from, and the record with its outcome and latency figures.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CallLog } from '../../../src/call/record/call-log.js';
import { realClock } from '../../../src/call/clock.js';
import type { HeardReply } from '../../../src/call/downlink/heard-audio.js';

const INFO = {
  callSid: 'CA00000000000000000000000000000001',
  streamSid: 'MZ00000000000000000000000000000001',
  carrier: 'twilio',
  direction: 'inbound' as const,
  from: '+15005550006',
  to: '+15005550001',
  profileName: 'default',
};

const heard = (reply: Partial<HeardReply>): HeardReply => ({
  text: '',
  sentMs: 1000,
  heardMs: 1000,
  interrupted: false,
  heardText: '',
  startedAtMs: 0,
  ...reply,
});

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(new Date('2030-01-02T03:04:05.000Z'));
});

afterEach(() => {
  vi.useRealTimers();
});

describe('CallLog', () => {
  it('keeps when the caller began each turn, and pairs the consent prompt with its own reply', () => {
    // Issue 30: replies' heard lengths shifted by one behind the consent prompt.
    const log = new CallLog(INFO, realClock);
    log.turn('assistant', 'This call is recorded.', 'consent');
    vi.advanceTimersByTime(1_000);
    log.userSpeaking();
    vi.advanceTimersByTime(500);
    log.userSpeaking();
    vi.advanceTimersByTime(700);
    log.turn('user', 'Hi there');
    log.turn('assistant', 'Hello!');
    const record = log.record('caller_hangup', [heard({ heardMs: 800 }), heard({ heardMs: 300 })], false);
    expect(record.turns.map((t) => [t.role, t.kind, t.spokeFromMs, t.heardMs])).toEqual([
      ['assistant', 'consent', undefined, 800],
      ['user', undefined, 1_000, undefined],
      ['assistant', undefined, undefined, 300],
    ]);
  });

  it('cuts an interrupted reply to what was heard, in the turns and in the history', () => {
    const log = new CallLog(INFO, realClock);
    log.turn('assistant', 'Hello, how can I help you today?');
    log.turn('user', 'Where is my order?');
    log.turn('assistant', 'Let me check that for you, one moment please.');
    log.turn('user', '   ');
    const replies = [
      heard({ sentMs: 2000, heardMs: 2000 }),
      heard({ sentMs: 3000, heardMs: 1000, interrupted: true, heardText: 'Let me check' }),
    ];
    expect(log.history(replies)).toEqual([
      { type: 'History', role: 'assistant', content: 'Hello, how can I help you today?' },
      { type: 'History', role: 'user', content: 'Where is my order?' },
      { type: 'History', role: 'assistant', content: 'Let me check' },
    ]);
    const { turns } = log.record('caller_hangup', replies, false);
    expect(turns[2]).toMatchObject({
      content: 'Let me check',
      generated: 'Let me check that for you, one moment please.',
      interrupted: true,
      sentMs: 3000,
      heardMs: 1000,
    });
    expect(turns[0]).toMatchObject({ interrupted: false, sentMs: 2000, heardMs: 2000 });
    expect(turns[0]).not.toHaveProperty('generated');
  });

  it('records times, figures and the outcome on the injected clock', () => {
    const log = new CallLog(INFO, realClock);
    vi.advanceTimersByTime(700);
    expect(log.firstAudio()).toBe(700);
    expect(log.firstAudio()).toBeNull(); // only the first counts
    log.agentConnected(120);
    log.agentConnected(90); // a redial does not replace the first connect
    log.agentReported(412.4);
    log.perceived(650.6);
    log.bargeIn();
    vi.advanceTimersByTime(300);
    log.functionCall({ name: 'f'.repeat(200), arguments: 'a'.repeat(5000), outcome: 'ok', durationMs: 12 });
    vi.advanceTimersByTime(9_000);
    const record = log.record('end_call', [], true);
    const { profileName, ...identity } = INFO;
    expect(record).toMatchObject({
      ...identity,
      profile: profileName,
      startedAt: '2030-01-02T03:04:05.000Z',
      endedAt: '2030-01-02T03:04:15.000Z',
      durationMs: 10_000,
      endReason: 'end_call',
      outcome: 'completed',
      bargeIns: 1,
      latency: { firstAudioMs: 700, agentConnectMs: 120, agentReportedMs: [412], perceivedMs: [651] },
      prewarmed: true,
    });
    expect(record.functionCalls[0]).toMatchObject({ outcome: 'ok', durationMs: 12, atMs: 1000 });
    expect(record.functionCalls[0]!.name).toHaveLength(128);
    expect(record.functionCalls[0]!.arguments).toHaveLength(4096);
  });

  it('counts the calls the service could not carry as failed', () => {
    const log = new CallLog(INFO, realClock);
    for (const reason of ['agent_closed', 'agent_error', 'agent_unreachable', 'agent_refused'] as const) {
      expect(log.record(reason, [], false).outcome).toBe('failed');
    }
    for (const reason of [
      'caller_hangup',
      'transferred',
      'silence_timeout',
      'max_duration',
      'shutdown',
    ] as const) {
      expect(log.record(reason, [], false).outcome).toBe('completed');
    }
  });
});
