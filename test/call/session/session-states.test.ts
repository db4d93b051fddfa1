// The session's state table on fake timers, with a fake leg and a scripted dialer: what a failed
// transfer returns the call to in each state, the one list of end reasons, and the listener seam
// on the call's audio (what a recorder hears, on the call's clock).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { MediaFormat } from '../../../src/audio/format.js';
import type { CallAudioListener } from '../../../src/call/audio-listener.js';
import type { OutboundFinalStatus } from '../../../src/call/carrier-port.js';
import { CARRIER_FINAL_REASONS, END_REASONS } from '../../../src/call/record/end-reason.js';
import { CallEventHub } from '../../../src/call/watch/events.js';
import { CALL_TRANSITIONS, type CallInfo, CallSession } from '../../../src/call/session/session.js';
import type { AgentProfile } from '../../../src/config/types.js';
import { createMetrics } from '../../../src/metrics/metrics.js';
import { unansweredRecord } from '../../../src/outbound/reports.js';
import type { CallRecord } from '../../../src/store/call-record.js';
import {
  type DialOutcome,
  type FakeDialer,
  type FakeLeg,
  fakeDialer,
  fakeLeg,
  silentLogger,
  unauthorized,
} from '../../helpers/call-fakes.js';

const MULAW_8K: MediaFormat = { encoding: 'mulaw', sampleRate: 8000, channels: 1 };
const PROFILE: AgentProfile = {
  name: 'default',
  language: 'en',
  prompt: 'You are a test agent.',
  greeting: 'Hello.',
  think: [{ provider: { type: 'open_ai', model: 'gpt-4o-mini' } }],
  builtins: { endCall: true, transferAllowList: ['+15550199'] },
  httpFunctions: [],
  dtmf: { enabled: false, interDigitTimeoutMs: 2000, terminator: '#', maxDigits: 20 },
  limits: { silencePromptMs: 0, silenceHangupMs: 0, maxCallMs: 0 },
  fallback: {},
  tags: [],
};
const FALLBACK = Buffer.alloc(800, 0x7e);

interface Call {
  session: CallSession;
  leg: FakeLeg;
  dialer: FakeDialer;
  records: CallRecord[];
  echo(): void;
}

function newCall(opts: { script?: DialOutcome[]; listeners?: CallAudioListener[] } = {}): Call {
  const info: CallInfo = {
    callSid: 'CA-states',
    streamSid: 'MZ-states',
    carrier: 'twilio',
    direction: 'inbound',
    from: '+15005550006',
    to: '+15005550001',
    profileName: 'default',
    profile: PROFILE,
    mediaFormat: MULAW_8K,
  };
  const leg = fakeLeg();
  const dialer = fakeDialer(opts.script ?? []);
  const records: CallRecord[] = [];
  const session = new CallSession(info, leg, {
    dial: (settings) => dialer.dial(settings),
    metrics: createMetrics('test'),
    logger: silentLogger(),
    events: new CallEventHub(),
    downlink: { frameBytes: 160 },
    maxEarlyAudioBytes: 64 * 1024,
    fallbackAudio: FALLBACK,
    ...(opts.listeners ? { audioListeners: opts.listeners } : {}),
    onEnded: (_, record) => records.push(record),
  });
  return {
    session,
    leg,
    dialer,
    records,
    echo: () => leg.echoMarks((name) => session.onMarkPlayed(name)),
  };
}

/** A transfer the test settles by hand. */
function heldTransfer(leg: FakeLeg): { succeed(): void; fail(): void } {
  let settle: { resolve(): void; reject(err: Error): void } | null = null;
  leg.transfer = (target) =>
    new Promise<void>((resolve, reject) => {
      leg.transfers.push(target);
      settle = { resolve, reject };
    });
  return {
    succeed: () => settle!.resolve(),
    fail: () => settle!.reject(new Error('transfer refused')),
  };
}

const settle = () => vi.advanceTimersByTimeAsync(0);

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

describe('a failed transfer returns the call to the state it left', () => {
  it('while connecting: back to connecting, not live with no agent, and live once the agent is ready', async () => {
    // Invariant: a call is `live` only while an agent carries it; a failed operator transfer
    // during the dial does not make it so.
    const call = newCall();
    void call.session.start();
    call.leg.failTransfers = true;
    await expect(call.session.transfer('+15550199')).rejects.toThrow('transfer refused');
    expect(call.session.state).toBe('connecting');
    expect(call.session.endReason).toBeNull();
    await settle();
    const agent = call.dialer.last();
    agent.ready();
    expect(call.session.state).toBe('live');
    // The apology is for a caller who was talking to the agent; this one never was.
    expect(agent.messages('InjectAgentMessage')).toEqual([]);
  });

  it('while connecting, with the agent ready before the carrier refused: live, and the agent apologises', async () => {
    const call = newCall();
    void call.session.start();
    await settle();
    const transfer = heldTransfer(call.leg);
    const asked = call.session.transfer('+15550199').catch((err: Error) => err);
    call.dialer.last().ready();
    expect(call.session.state).toBe('finishing'); // the transfer is still under way
    transfer.fail();
    expect(await asked).toBeInstanceOf(Error);
    expect(call.session.state).toBe('live');
    expect(call.dialer.last().messages('InjectAgentMessage').at(-1)!.message).toMatch(/couldn't transfer/);
  });

  it('while connecting, when no agent could be dialed meanwhile: the fallback plays, then the call ends', async () => {
    const call = newCall({ script: [unauthorized()] });
    const started = call.session.start();
    const transfer = heldTransfer(call.leg);
    const asked = call.session.transfer('+15550199').catch((err: Error) => err);
    await started; // the dial failed while the transfer was under way: nothing decided yet
    expect(call.session.state).toBe('finishing');
    expect(call.leg.audio().length).toBe(0);
    transfer.fail();
    expect(await asked).toBeInstanceOf(Error);
    await settle();
    expect(call.leg.audio().equals(FALLBACK)).toBe(true);
    call.echo();
    await settle();
    expect(call.records[0]).toMatchObject({ endReason: 'agent_unreachable', outcome: 'failed' });
  });

  it('while live, when the agent dropped meanwhile: the call redials instead of ending as transferred', async () => {
    const call = newCall();
    await call.session.start();
    call.dialer.last().ready();
    const transfer = heldTransfer(call.leg);
    const asked = call.session.transfer('+15550199').catch((err: Error) => err);
    call.dialer.last().drop();
    expect(call.records).toEqual([]);
    transfer.fail();
    await asked;
    expect(call.session.state).toBe('reconnecting');
    await settle();
    expect(call.dialer.dials).toHaveLength(2);
    call.dialer.last().ready();
    expect(call.session.state).toBe('live');
  });

  it('a transfer that succeeds ends the call as transferred and closes only the stream', async () => {
    const call = newCall();
    void call.session.start();
    await call.session.transfer('+15550199');
    expect(call.records[0]!.endReason).toBe('transferred');
    expect(call.leg.streamsClosed).toBe(1);
    expect(call.leg.hangups).toBe(0);
  });

  it('the table allows leaving finishing only for the states a call can come from, or the end', () => {
    expect([...CALL_TRANSITIONS.finishing].sort()).toEqual(['connecting', 'ending', 'live', 'reconnecting']);
    expect(Object.isFrozen(CALL_TRANSITIONS)).toBe(true);
  });
});

describe('one list of end reasons', () => {
  it("names every carrier's final status, so a record of an unanswered call states a listed reason", () => {
    const statuses: OutboundFinalStatus[] = ['completed', 'busy', 'no_answer', 'failed', 'canceled'];
    for (const status of statuses) {
      const reason = CARRIER_FINAL_REASONS[status];
      expect(Object.hasOwn(END_REASONS, reason)).toBe(true);
      const record = unansweredRecord(
        {
          carrier: 'twilio',
          callSid: 'CA-x',
          from: '+15005550006',
          to: '+15005550001',
          status,
          reason: null,
          durationMs: null,
          context: {
            profile: 'default',
            campaignId: 'camp',
            contact: 1,
            attemptId: 'a1',
            variables: {},
            amd: null,
          },
        },
        'carrier status busy',
        0,
      );
      expect(record.endReason).toBe(reason);
    }
  });

  it('hangs up only where the bridge ends the call', () => {
    for (const [reason, expected] of [
      ['caller_hangup', { hangups: 0, streamsClosed: 0 }],
      ['operator_hangup', { hangups: 1, streamsClosed: 0 }],
      ['transferred', { hangups: 0, streamsClosed: 1 }],
    ] as const) {
      const call = newCall();
      call.session.end(reason);
      expect({ hangups: call.leg.hangups, streamsClosed: call.leg.streamsClosed }).toEqual(expected);
      expect(call.records[0]!.endReason).toBe(reason);
    }
  });
});

describe('listeners on the call audio', () => {
  function recorder(): CallAudioListener & { events: Array<[string, number, number]> } {
    const events: Array<[string, number, number]> = [];
    return {
      events,
      callerFrame: (payload, atMs) => events.push(['caller', payload.length, atMs]),
      played: (payload, atMs) => events.push(['played', payload.length, atMs]),
      truncated: (atMs) => events.push(['truncated', 0, atMs]),
    };
  }

  it("hears the caller's frames and the played audio on the call's clock, and a barge-in's truncation", async () => {
    const listener = recorder();
    const call = newCall({ listeners: [listener] });
    await call.session.start();
    const agent = call.dialer.last();
    agent.ready();
    await vi.advanceTimersByTimeAsync(100);
    call.session.onCallerAudio(Buffer.alloc(160, 0xff));
    agent.say({ type: 'AgentStartedSpeaking' });
    agent.speak(Buffer.alloc(1600, 0x11)); // 200 ms of μ-law
    agent.speak(Buffer.alloc(800, 0x11)); // queued behind it: plays 200 ms later
    await vi.advanceTimersByTimeAsync(50);
    agent.say({ type: 'UserStartedSpeaking' });
    expect(listener.events).toEqual([
      ['caller', 160, 100],
      ['played', 1600, 100],
      ['played', 800, 300],
      ['truncated', 0, 150],
    ]);
  });

  it('stops hearing once removed, and a listener that throws is removed without harming the call', async () => {
    const kept = recorder();
    const call = newCall();
    const remove = call.session.listen(kept);
    const broken: CallAudioListener = {
      callerFrame: () => {
        throw new Error('disk full');
      },
      played: () => {},
      truncated: () => {},
    };
    call.session.listen(broken);
    call.session.onCallerAudio(Buffer.alloc(160, 0xff));
    call.session.onCallerAudio(Buffer.alloc(160, 0xff));
    remove();
    call.session.onCallerAudio(Buffer.alloc(160, 0xff));
    expect(kept.events.map(([kind]) => kind)).toEqual(['caller', 'caller']);
    expect(call.session.state).toBe('connecting');
  });
});
