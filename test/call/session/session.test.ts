// The call session on fake timers, with a fake leg, a scripted dialer and fake agent sessions: no
// app, no sockets. Barge-in, heard audio, the polite endings, redial with history, the retry rules,
// the one queue, the carrier's downlink rules, and the perceived-latency figure.
import type { Counter, Histogram } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SettingsMessage } from '../../../src/agent/protocol.js';
import type { MediaFormat } from '../../../src/audio/format.js';
import type { DownlinkRules } from '../../../src/call/carrier-port.js';
import { CallEventHub, type CallEvent } from '../../../src/call/watch/events.js';
import { SETTINGS_APPLIED_TIMEOUT_MS } from '../../../src/call/session/agent-link.js';
import { AgentQueue } from '../../../src/call/session/agent-queue.js';
import type { PromptPlayer } from '../../../src/call/session/fallback-audio.js';
import type { CallRecord } from '../../../src/store/call-record.js';
import { type CallInfo, CallSession, SHUTDOWN_FAREWELL } from '../../../src/call/session/session.js';
import type { AgentProfile } from '../../../src/config/types.js';
import { createMetrics, type Metrics } from '../../../src/metrics/metrics.js';
import {
  type DialOutcome,
  type FakeAgent,
  type FakeDialer,
  type FakeLeg,
  fakeAgent,
  fakeDialer,
  fakeLeg,
  refused,
  silentLogger,
  unauthorized,
} from '../../helpers/call-fakes.js';

const CALL_SID = 'CA0123456789abcdef0123456789abcdef';
const MULAW_8K: MediaFormat = { encoding: 'mulaw', sampleRate: 8000, channels: 1 };
const TWILIO: DownlinkRules = { frameBytes: 160 };

const PROFILE: AgentProfile = {
  name: 'default',
  language: 'en',
  prompt: 'You are a test agent.',
  greeting: 'Hello from the test.',
  think: [{ provider: { type: 'open_ai', model: 'gpt-4o-mini' } }],
  builtins: { endCall: true, transferAllowList: ['+15550199'] },
  httpFunctions: [],
  dtmf: { enabled: true, interDigitTimeoutMs: 2000, terminator: '#', maxDigits: 20 },
  limits: { silencePromptMs: 0, silenceHangupMs: 0, maxCallMs: 0 },
  fallback: {},
  tags: [],
};

/** A loud μ-law frame (0x00 and 0x80 decode to the extremes) and a silent one. */
const VOICED = Buffer.alloc(160, 0x00);
const SILENT = Buffer.alloc(160, 0xff);
const FALLBACK = Buffer.alloc(1600, 0x7e);
const PREWARM_SETTINGS: SettingsMessage = {
  type: 'Settings',
  audio: {
    input: { encoding: 'mulaw', sample_rate: 8000 },
    output: { encoding: 'mulaw', sample_rate: 8000 },
  },
  agent: { greeting: 'Hello from the test.' },
};

interface Call {
  session: CallSession;
  leg: FakeLeg;
  dialer: FakeDialer;
  metrics: Metrics;
  published: CallEvent[];
  records: CallRecord[];
  /** The carrier echoes every mark sent so far. */
  echo(): void;
  agent(): FakeAgent;
}

function newCall(
  opts: {
    profile?: Partial<AgentProfile>;
    rules?: DownlinkRules;
    format?: MediaFormat;
    script?: DialOutcome[];
    fallbackAudio?: Buffer | null;
    canTransfer?: boolean;
    maxEarlyAudioBytes?: number;
    prompts?: PromptPlayer;
    heldAudio?: AgentQueue;
  } = {},
): Call {
  const format = opts.format ?? MULAW_8K;
  const info: CallInfo = {
    callSid: CALL_SID,
    streamSid: 'MZ0123456789abcdef0123456789abcdef',
    carrier: 'twilio',
    direction: 'inbound',
    from: '+15005550006',
    to: '+15005550001',
    profileName: 'default',
    profile: { ...PROFILE, ...opts.profile },
    mediaFormat: format,
  };
  const leg = fakeLeg({ canTransfer: opts.canTransfer ?? true });
  const dialer = fakeDialer(opts.script ?? []);
  const metrics = createMetrics('test');
  const events = new CallEventHub();
  const published: CallEvent[] = [];
  events.subscribe(CALL_SID, (event) => published.push(event));
  const records: CallRecord[] = [];
  const session = new CallSession(info, leg, {
    dial: (settings) => dialer.dial(settings),
    metrics,
    logger: silentLogger(),
    events,
    downlink: opts.rules ?? TWILIO,
    maxEarlyAudioBytes: opts.maxEarlyAudioBytes ?? 64 * 1024,
    fallbackAudio: opts.fallbackAudio === undefined ? FALLBACK : opts.fallbackAudio,
    ...(opts.prompts ? { prompts: opts.prompts } : {}),
    ...(opts.heldAudio ? { heldAudio: opts.heldAudio } : {}),
    onEnded: (_, record) => records.push(record),
  });
  return {
    session,
    leg,
    dialer,
    metrics,
    published,
    records,
    echo: () => leg.echoMarks((name) => session.onMarkPlayed(name)),
    agent: () => dialer.last(),
  };
}

/** A call whose agent has answered SettingsApplied. */
async function liveCall(opts: Parameters<typeof newCall>[0] = {}): Promise<Call> {
  const call = newCall(opts);
  await call.session.start();
  call.agent().ready();
  expect(call.session.state).toBe('live');
  return call;
}

const settle = () => vi.advanceTimersByTimeAsync(0);

async function count(counter: Counter<string>, labels: Record<string, string> = {}): Promise<number> {
  const { values } = await counter.get();
  return values
    .filter((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want))
    .reduce((n, v) => n + v.value, 0);
}

async function observations(histogram: Histogram<string>): Promise<number> {
  const { values } = await histogram.get();
  return values.find((v) => v.metricName?.endsWith('_count'))?.value ?? 0;
}

function reply(agent: FakeAgent, text: string, audio: Buffer[], done = true): void {
  agent.say({ type: 'AgentStartedSpeaking', total_latency: 0.5, tts_latency: 0.2, ttt_latency: 0.3 });
  agent.say({ type: 'ConversationText', role: 'assistant', content: text });
  for (const chunk of audio) agent.speak(chunk);
  if (done) agent.say({ type: 'AgentAudioDone' });
}

function callFunction(agent: FakeAgent, name: string, args: Record<string, unknown> = {}): void {
  agent.say({
    type: 'FunctionCallRequest',
    functions: [{ id: `fc_${name}`, name, arguments: JSON.stringify(args), client_side: true }],
  });
}

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

describe('start and relay', () => {
  it('sends no caller audio before SettingsApplied, holds it in one queue, and loses none', async () => {
    // Invariant: nothing reaches the agent before SettingsApplied, and caller audio held meanwhile arrives in order.
    const call = newCall();
    const early = [Buffer.alloc(160, 1), Buffer.alloc(160, 2)];
    call.session.onCallerAudio(early[0]!);
    const started = call.session.start();
    call.session.onCallerAudio(early[1]!);
    await started;
    expect(call.session.state).toBe('connecting');
    const agent = call.agent();
    expect(agent.received).toEqual([]);
    agent.ready();
    expect(call.session.state).toBe('live');
    const later = Buffer.alloc(160, 3);
    call.session.onCallerAudio(later);
    expect(agent.receivedAudio().equals(Buffer.concat([...early, later]))).toBe(true);
    expect(agent.settings.agent.greeting).toBe(PROFILE.greeting);
  });

  it('keeps the queue the stream held audio in since its start: those frames reach the agent first, once', async () => {
    // Invariant: a frame held while the stream was verified waits in one queue only, and is the call's.
    const queueMetrics = createMetrics('test');
    const held = new AgentQueue(64 * 1024, queueMetrics);
    const early = [Buffer.alloc(160, 1), Buffer.alloc(160, 2)];
    for (const frame of early) held.audio(frame);
    const call = newCall({ heldAudio: held });
    await call.session.start();
    const later = Buffer.alloc(160, 3);
    call.session.onCallerAudio(later);
    expect(held.audioBytes).toBe(480); // the same queue, now the link's
    const agent = call.agent();
    agent.ready();
    expect(held.audioBytes).toBe(0);
    expect(agent.receivedAudio().equals(Buffer.concat([...early, later]))).toBe(true);
    call.session.end('caller_hangup');
    expect(call.records[0]).toBeDefined();
    expect(call.metrics.audio.upFrames).toBe(3);
  });

  it('drops the oldest early audio past the bound and counts it', async () => {
    const call = newCall({ maxEarlyAudioBytes: 1600 });
    await call.session.start();
    for (let i = 0; i < 15; i++) call.session.onCallerAudio(Buffer.alloc(160, i));
    expect(await count(call.metrics.audioDropped, { buffer: 'agent_queue' })).toBe(5);
    call.agent().ready();
    expect(call.agent().receivedAudio()).toHaveLength(1600);
    expect(call.agent().receivedAudio()[0]).toBe(5);
  });

  it('adopts a pre-warmed agent instead of dialing', async () => {
    const call = newCall();
    const agent = fakeAgent(PREWARM_SETTINGS);
    agent.ready(); // before the stream arrived: held until the call attaches
    await call.session.start(Promise.resolve(agent));
    expect(call.dialer.dials).toHaveLength(0);
    expect(call.session.state).toBe('live');
    call.session.end('caller_hangup');
    expect(call.records[0]!.prewarmed).toBe(true);
  });

  it('cuts agent audio into the carrier rules: exactly one 640-byte frame per message for Vonage', async () => {
    const call = await liveCall({
      format: { encoding: 'linear16', sampleRate: 16000, channels: 1 },
      rules: { frameBytes: 640, maxMessageBytes: 640, paceAheadMs: 1000 },
    });
    reply(call.agent(), 'Hello.', [Buffer.alloc(1000), Buffer.alloc(3000)]);
    await vi.advanceTimersByTimeAsync(1000);
    const sizes = call.leg.commands.flatMap((c) => (c.kind === 'audio' ? [c.bytes.length] : []));
    expect(sizes).toEqual([640, 640, 640, 640, 640, 640, 640]);
  });

  it('pads a short reply to the minimum message for Exotel', async () => {
    const call = await liveCall({
      format: { encoding: 'linear16', sampleRate: 8000, channels: 1 },
      rules: { frameBytes: 320, minMessageBytes: 3200, maxMessageBytes: 100_000 },
    });
    reply(call.agent(), 'Hi.', [Buffer.alloc(500, 1)]);
    const sizes = call.leg.commands.flatMap((c) => (c.kind === 'audio' ? [c.bytes.length] : []));
    expect(sizes).toEqual([3200]);
  });
});

describe('barge-in', () => {
  it('clears the carrier at once and forwards no more of the interrupted reply', async () => {
    const call = await liveCall();
    const agent = call.agent();
    reply(agent, 'A long answer that goes on and on.', [Buffer.alloc(8000, 1)], false);
    expect(call.leg.audio()).toHaveLength(8000);
    await vi.advanceTimersByTimeAsync(300);
    agent.say({ type: 'UserStartedSpeaking' });
    expect(call.leg.commands.at(-1)).toEqual({ kind: 'clear' });
    agent.speak(Buffer.alloc(1600, 2)); // the rest of the interrupted reply
    agent.say({ type: 'AgentAudioDone' });
    expect(call.leg.audio()).toHaveLength(8000);
    expect(call.published).toContainEqual({ type: 'barge-in' });
    expect(await count(call.metrics.bargeIns)).toBe(1);

    reply(agent, 'Yes?', [Buffer.alloc(160, 3)]);
    expect(call.leg.audio()).toHaveLength(8160);
    call.session.end('caller_hangup');
    expect(call.records[0]!.bargeIns).toBe(1);
  });

  it('counts no barge-in when nothing was playing, but still clears', async () => {
    const call = await liveCall();
    call.agent().say({ type: 'UserStartedSpeaking' });
    expect(call.leg.commands).toEqual([{ kind: 'clear' }]);
    expect(await count(call.metrics.bargeIns)).toBe(0);
  });

  it('records an interrupted reply as heard up to the last mark echoed before the clear', async () => {
    const call = await liveCall();
    const agent = call.agent();
    reply(
      agent,
      'One two three four five six seven eight nine ten',
      [Buffer.alloc(8000), Buffer.alloc(8000)],
      false,
    );
    // A progress mark after each second of audio.
    expect(call.leg.marks()).toHaveLength(2);
    call.session.onMarkPlayed(call.leg.marks()[0]!);
    agent.say({ type: 'UserStartedSpeaking' });
    call.session.end('caller_hangup');
    expect(call.records[0]!.turns[0]).toMatchObject({
      role: 'assistant',
      content: 'One two three four five',
      generated: 'One two three four five six seven eight nine ten',
      interrupted: true,
      sentMs: 2000,
      heardMs: 1000,
    });
  });
});

describe('polite endings', () => {
  it('end_call: hangs up only after the goodbye was heard', async () => {
    const call = await liveCall();
    const agent = call.agent();
    callFunction(agent, 'end_call');
    await settle();
    expect(agent.messages('FunctionCallResponse')[0]).toMatchObject({ id: 'fc_end_call', name: 'end_call' });
    expect(call.session.state).toBe('finishing');
    reply(agent, 'Goodbye!', [Buffer.alloc(1600)]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(call.leg.hangups).toBe(0); // played, but not yet confirmed
    call.echo();
    await settle();
    expect(call.leg.hangups).toBe(1);
    expect(call.session.state).toBe('ended');
    expect(call.records[0]).toMatchObject({ endReason: 'end_call', outcome: 'completed' });
  });

  it('end_call: hangs up at the cap when the goodbye never comes', async () => {
    const call = await liveCall();
    callFunction(call.agent(), 'end_call');
    await vi.advanceTimersByTimeAsync(2_000); // the reply never starts
    await settle();
    expect(call.session.state).toBe('finishing');
    await vi.advanceTimersByTimeAsync(15_000);
    expect(call.session.state).toBe('ended');
    expect(call.records[0]!.endReason).toBe('end_call');
  });

  it('silence: checks in, then says goodbye and ends once it was heard', async () => {
    const call = await liveCall({
      profile: { limits: { silencePromptMs: 5_000, silenceHangupMs: 12_000, maxCallMs: 0 } },
    });
    const agent = call.agent();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(agent.messages('InjectAgentMessage')).toEqual([
      { type: 'InjectAgentMessage', message: 'Are you still there?' },
    ]);
    await vi.advanceTimersByTimeAsync(7_000);
    expect(call.session.state).toBe('finishing');
    expect(agent.messages('InjectAgentMessage')[1]!.message).toMatch(/haven't heard anything/);
    reply(agent, 'Goodbye.', [Buffer.alloc(800)]);
    await settle();
    call.echo();
    await settle();
    expect(call.records[0]).toMatchObject({ endReason: 'silence_timeout' });
    expect(call.leg.hangups).toBe(1);
  });

  it('max duration: the farewell is asked for, and the call ends even if the agent stays silent', async () => {
    const call = await liveCall({
      profile: { limits: { silencePromptMs: 0, silenceHangupMs: 0, maxCallMs: 60_000 } },
    });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(call.session.state).toBe('finishing');
    expect(call.agent().messages('InjectAgentMessage')[0]!.message).toMatch(/time limit/);
    await vi.advanceTimersByTimeAsync(4_000 + 15_000);
    expect(call.records[0]!.endReason).toBe('max_duration');
  });

  it('a second polite end does not replace the first, and end() records one reason', async () => {
    const call = await liveCall();
    callFunction(call.agent(), 'end_call');
    await settle();
    void call.session.finish('shutdown', SHUTDOWN_FAREWELL);
    expect(call.session.endReason).toBe('end_call');
    call.session.end('caller_hangup');
    call.session.end('shutdown');
    expect(call.records).toHaveLength(1);
    expect(call.records[0]!.endReason).toBe('caller_hangup');
    expect(call.leg.hangups).toBe(0); // the caller already hung up
    expect(call.agent().closed).toBe(true);
    expect(call.published.at(-1)).toEqual({ type: 'end', reason: 'caller_hangup' });
  });

  it('transfer: moves the call after the last reply was heard, and closes only the stream', async () => {
    const call = await liveCall();
    const agent = call.agent();
    callFunction(agent, 'transfer_call', { target: '+15550199' });
    await settle();
    reply(agent, 'Connecting you now.', [Buffer.alloc(800)]);
    await settle();
    expect(call.leg.transfers).toEqual([]);
    call.echo();
    await settle();
    expect(call.leg.transfers).toEqual(['+15550199']);
    expect(call.leg.streamsClosed).toBe(1);
    expect(call.leg.hangups).toBe(0);
    expect(call.records[0]!.endReason).toBe('transferred');
  });

  it('transfer: a failed transfer hands the call back to the agent, who apologises', async () => {
    const call = await liveCall();
    call.leg.failTransfers = true;
    const agent = call.agent();
    callFunction(agent, 'transfer_call', { target: '+15550199' });
    await settle();
    reply(agent, 'Connecting you now.', [Buffer.alloc(800)]);
    await settle();
    call.echo();
    await settle();
    expect(call.session.state).toBe('live');
    expect(call.session.endReason).toBeNull();
    expect(agent.messages('InjectAgentMessage').at(-1)!.message).toMatch(/couldn't transfer you/);
    callFunction(agent, 'end_call'); // and the call can still end politely
    await settle();
    expect(call.session.state).toBe('finishing');
  });

  it('a goodbye cut short by the agent dropping ends the call with the reason under way', async () => {
    const call = await liveCall();
    callFunction(call.agent(), 'end_call');
    await settle();
    call.agent().drop();
    expect(call.records[0]!.endReason).toBe('end_call');
    expect(call.dialer.dials).toHaveLength(1); // no redial for a call that is ending
  });
});

describe('no agent can carry the call', () => {
  it('does not retry rejected credentials: one dial, then the fallback, heard before the hang-up', async () => {
    // Invariant: a 401/403 from the agent is not retried, at call start or later.
    const call = newCall({ script: [unauthorized(), unauthorized()] });
    void call.session.start();
    await settle();
    expect(call.dialer.dials).toHaveLength(1);
    expect(call.session.state).toBe('finishing');
    expect(call.leg.audio().equals(FALLBACK)).toBe(true);
    expect(call.leg.hangups).toBe(0);
    call.echo();
    await settle();
    expect(call.records[0]).toMatchObject({ endReason: 'agent_unreachable', outcome: 'failed' });
    expect(call.leg.hangups).toBe(1);
  });

  it('retries a refused handshake within the budget, then ends with agent_refused', async () => {
    const call = newCall({ script: Array.from({ length: 50 }, refused), fallbackAudio: null });
    void call.session.start();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(call.session.state).toBe('connecting');
    await vi.advanceTimersByTimeAsync(3_000);
    expect(call.dialer.dials.length).toBeGreaterThan(3);
    expect(call.dialer.dials.length).toBeLessThan(10);
    expect(call.records[0]!.endReason).toBe('agent_refused');
  });

  it('connects when a refusal clears within the budget', async () => {
    const call = newCall({ script: [refused(), refused()] });
    void call.session.start();
    await vi.advanceTimersByTimeAsync(1_000);
    call.agent().ready();
    expect(call.session.state).toBe('live');
  });

  it('transfers to the fallback number when the profile has one', async () => {
    const call = newCall({ script: [unauthorized()], profile: { fallback: { transferTo: '+15550123' } } });
    await call.session.start();
    expect(call.leg.transfers).toEqual(['+15550123']);
    expect(call.records[0]!.endReason).toBe('transferred');
  });

  it('ends on a fatal agent Error after the fallback, without redialing', async () => {
    const call = await liveCall();
    call.agent().say({ type: 'Error', code: 'INVALID_SETTINGS', description: 'settings rejected' });
    await settle();
    expect(call.dialer.dials).toHaveLength(1);
    call.echo();
    await settle();
    expect(call.records[0]!.endReason).toBe('agent_error');
  });
});

describe('SettingsApplied that never comes', () => {
  it('treats an agent silent past the bound as failed: closed, then the fallback, then the end', async () => {
    // Invariant: an agent that never acknowledges Settings cannot hold a caller in silence.
    const call = newCall();
    await call.session.start();
    await vi.advanceTimersByTimeAsync(SETTINGS_APPLIED_TIMEOUT_MS - 1);
    expect(call.session.state).toBe('connecting');
    expect(call.leg.audio()).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(call.agent().closed).toBe(true);
    expect(call.dialer.dials).toHaveLength(1);
    expect(call.leg.audio().equals(FALLBACK)).toBe(true);
    call.echo();
    await settle();
    expect(call.records[0]).toMatchObject({ endReason: 'agent_unreachable', outcome: 'failed' });
    expect(await count(call.metrics.agentSettingsTimeouts)).toBe(1);
  });

  it('applies the same bound to a redialed agent', async () => {
    const call = await liveCall();
    call.agent().drop();
    await settle();
    expect(call.dialer.dials).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(SETTINGS_APPLIED_TIMEOUT_MS);
    expect(call.dialer.last().closed).toBe(true);
    call.echo();
    await settle();
    expect(call.records[0]!.endReason).toBe('agent_unreachable');
  });

  it('leaves a pre-warmed agent that was ready before the stream alone', async () => {
    const call = newCall();
    const agent = fakeAgent(PREWARM_SETTINGS);
    agent.ready();
    await call.session.start(Promise.resolve(agent));
    await vi.advanceTimersByTimeAsync(SETTINGS_APPLIED_TIMEOUT_MS * 2);
    expect(call.session.state).toBe('live');
    expect(agent.closed).toBe(false);
    expect(await count(call.metrics.agentSettingsTimeouts)).toBe(0);
  });

  it('stops the clock once SettingsApplied arrives', async () => {
    const call = newCall();
    await call.session.start();
    await vi.advanceTimersByTimeAsync(SETTINGS_APPLIED_TIMEOUT_MS - 100);
    call.agent().ready();
    await vi.advanceTimersByTimeAsync(SETTINGS_APPLIED_TIMEOUT_MS * 2);
    expect(call.session.state).toBe('live');
    expect(call.agent().closed).toBe(false);
  });
});

describe('fixed prompts a caller hears without an agent', () => {
  const UNAVAILABLE = Buffer.alloc(800, 0x11);
  const GOODBYE = Buffer.alloc(480, 0x22);
  /** The carrier plays everything sent, the goodbye and the last words' mark after it. */
  const heardThrough = async (call: Call) => {
    for (let i = 0; i < 3; i++) {
      call.echo();
      await settle();
    }
  };
  const prompts = () => {
    const asked: string[] = [];
    const player: PromptPlayer = async (kind) => {
      asked.push(kind);
      return kind === 'unavailable' ? UNAVAILABLE : kind === 'drain_goodbye' ? GOODBYE : null;
    };
    return { asked, player };
  };

  it('plays the "unavailable" prompt when the profile has no recording of its own', async () => {
    const { asked, player } = prompts();
    const call = newCall({ script: [unauthorized()], fallbackAudio: null, prompts: player });
    void call.session.start();
    await settle();
    expect(asked).toEqual(['unavailable']);
    expect(call.leg.audio().equals(UNAVAILABLE)).toBe(true);
    call.echo();
    await settle();
    expect(call.records[0]!.endReason).toBe('agent_unreachable');
  });

  it("prefers the profile's own recording", async () => {
    const { asked, player } = prompts();
    const call = newCall({ script: [unauthorized()], prompts: player });
    void call.session.start();
    await settle();
    expect(asked).toEqual([]);
    expect(call.leg.audio().equals(FALLBACK)).toBe(true);
  });

  it('a drain with no agent ready plays the goodbye prompt before hanging up', async () => {
    const { asked, player } = prompts();
    const call = newCall({ prompts: player });
    await call.session.start(); // dialed, SettingsApplied not yet
    const finished = call.session.finish('shutdown', SHUTDOWN_FAREWELL);
    await settle();
    expect(asked).toEqual(['drain_goodbye']);
    expect(call.leg.audio().equals(GOODBYE)).toBe(true);
    expect(call.leg.hangups).toBe(0);
    // The agent that never became ready is let go: its silence cannot cut the goodbye short.
    expect(call.agent().closed).toBe(true);
    await vi.advanceTimersByTimeAsync(SETTINGS_APPLIED_TIMEOUT_MS);
    expect(call.session.state).toBe('finishing');
    await heardThrough(call);
    await finished;
    expect(call.records[0]!.endReason).toBe('shutdown');
    expect(call.leg.hangups).toBe(1);
  });

  it('asks a live agent for the goodbye with behavior queue, and plays the prompt at once if it refuses', async () => {
    const { asked, player } = prompts();
    const call = await liveCall({ prompts: player });
    const finished = call.session.finish('shutdown', SHUTDOWN_FAREWELL);
    await settle();
    expect(call.agent().messages('InjectAgentMessage')).toEqual([
      { type: 'InjectAgentMessage', message: SHUTDOWN_FAREWELL, behavior: 'queue' },
    ]);
    expect(asked).toEqual([]);
    call.agent().say({ type: 'InjectionRefused', message: 'busy' });
    await settle(); // no waiting out the grace period
    expect(asked).toEqual(['drain_goodbye']);
    expect(call.leg.audio().equals(GOODBYE)).toBe(true);
    await heardThrough(call);
    await finished;
    expect(call.records[0]!.endReason).toBe('shutdown');
  });

  it('a goodbye the agent speaks needs no prompt', async () => {
    const { asked, player } = prompts();
    const call = await liveCall({ prompts: player });
    const finished = call.session.finish('shutdown', SHUTDOWN_FAREWELL);
    await settle();
    reply(call.agent(), SHUTDOWN_FAREWELL, [Buffer.alloc(320, 0x33)]);
    await settle();
    await heardThrough(call);
    await finished;
    expect(asked).toEqual([]);
    expect(call.records[0]!.endReason).toBe('shutdown');
  });
});

describe('redial with history', () => {
  it('redials at once when the agent drops, with the heard history and no second greeting', async () => {
    const call = await liveCall();
    const first = call.agent();
    first.say({ type: 'ConversationText', role: 'user', content: 'Where is my order?' });
    reply(first, 'Let me check that for you.', [Buffer.alloc(800)]);
    call.echo();
    first.drop({ code: 1011, reason: 'restarting' });
    expect(call.session.state).toBe('reconnecting');
    const during = Buffer.alloc(160, 4);
    call.session.onCallerAudio(during);
    await settle();
    const second = call.agent();
    expect(second).not.toBe(first);
    expect(second.settings.agent.greeting).toBeUndefined();
    expect(second.settings.agent.context?.messages).toEqual([
      { type: 'History', role: 'user', content: 'Where is my order?' },
      { type: 'History', role: 'assistant', content: 'Let me check that for you.' },
    ]);
    second.ready();
    expect(call.session.state).toBe('live');
    expect(second.receivedAudio().equals(during)).toBe(true);
    reply(second, 'Found it.', [Buffer.alloc(160, 5)]);
    expect(call.leg.audio().subarray(-160).equals(Buffer.alloc(160, 5))).toBe(true);
    expect(await count(call.metrics.agentReconnects, { outcome: 'ok' })).toBe(1);
  });

  it('redials after a retryable agent Error', async () => {
    const call = await liveCall();
    call.agent().say({ type: 'Error', code: 'SERVICE_UNAVAILABLE', description: 'busy' });
    await settle();
    expect(call.dialer.dials).toHaveLength(2);
    expect(call.session.state).toBe('reconnecting');
  });

  it('does not run the redial schedule on rejected credentials: one redial, then the fallback', async () => {
    const call = await liveCall();
    call.dialer.script = [unauthorized(), unauthorized(), unauthorized()];
    call.agent().drop();
    await settle();
    expect(call.dialer.dials).toHaveLength(2);
    expect(call.session.state).toBe('finishing');
    call.echo();
    await settle();
    expect(call.records[0]!.endReason).toBe('agent_closed');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(call.dialer.dials).toHaveLength(2);
  });

  it('gives up after the redial schedule when every attempt fails', async () => {
    const call = await liveCall({ fallbackAudio: null });
    call.dialer.script = Array.from({ length: 10 }, refused);
    call.agent().drop();
    await vi.advanceTimersByTimeAsync(3_750);
    expect(call.dialer.dials).toHaveLength(6);
    expect(call.records[0]!.endReason).toBe('agent_closed');
    expect(await count(call.metrics.agentReconnects, { outcome: 'failed' })).toBe(1);
  });
});

describe('keypad', () => {
  it('sends the entry to the agent as one message', async () => {
    const call = await liveCall();
    for (const digit of ['1', '2', '3', '#']) call.session.onCallerDtmf(digit);
    expect(call.agent().messages('InjectUserMessage')).toEqual([
      { type: 'InjectUserMessage', content: 'The caller entered 1 2 3' },
    ]);
    expect(call.published).toContainEqual({ type: 'dtmf', digits: '123' });
  });

  it('holds an entry made before the agent is ready and sends it on SettingsApplied', async () => {
    const call = newCall();
    await call.session.start();
    for (const digit of ['4', '2']) call.session.onCallerDtmf(digit);
    await vi.advanceTimersByTimeAsync(2_000); // the inter-digit timeout ends the entry
    expect(call.agent().received).toEqual([]);
    call.agent().ready();
    expect(call.agent().messages('InjectUserMessage')[0]!.content).toBe('The caller entered 4 2');
  });
});

describe('perceived response latency', () => {
  it('runs from the end of caller speech that the silence monitor dates, not from its detector deciding', async () => {
    // Invariant: the wait the caller perceives starts at their last voiced frame, not ~180 ms later when the detector's hangover runs out.
    const call = await liveCall();
    for (let i = 0; i < 5; i++) {
      await vi.advanceTimersByTimeAsync(20);
      call.session.onCallerAudio(VOICED);
    }
    // The detector waits through 8 unvoiced frames (its hangover) and decides on the 9th.
    for (let i = 0; i < 9; i++) {
      await vi.advanceTimersByTimeAsync(20);
      call.session.onCallerAudio(SILENT);
    }
    reply(call.agent(), 'Sure.', [Buffer.alloc(160)]);
    call.session.end('caller_hangup');
    expect(call.records[0]!.latency.perceivedMs).toEqual([180]);
    expect(await observations(call.metrics.perceivedLatency)).toBe(1);
  });
});
