// The agent link on fake timers, with a scripted dialer and fake agent sessions: the one queue for
// what waits for the agent, pre-warm adoption, the start retries and the redial, each decided by
// the error's code and `retryable`.
import type { Counter } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { HistoryMessage, SettingsMessage } from '../../../src/agent/protocol.js';
import {
  AgentLink,
  type AgentLinkListener,
  MAX_QUEUED_MESSAGES,
  RECONNECT_DELAYS_MS,
  startRetryDelayMs,
} from '../../../src/call/session/agent-link.js';
import { realClock } from '../../../src/call/clock.js';
import { createMetrics, type Metrics } from '../../../src/metrics/metrics.js';
import {
  type FakeDialer,
  fakeAgent,
  fakeDialer,
  refused,
  silentLogger,
  timedOut,
  unauthorized,
  unreachable,
} from '../../helpers/call-fakes.js';

const settingsFor = (history: HistoryMessage[]): SettingsMessage => ({
  type: 'Settings',
  audio: {
    input: { encoding: 'mulaw', sample_rate: 8000 },
    output: { encoding: 'mulaw', sample_rate: 8000 },
  },
  agent: history.length > 0 ? { context: { messages: history } } : { greeting: 'Hello!' },
});

let metrics: Metrics;
let dialer: FakeDialer;
let events: Array<{ kind: string; detail?: unknown }>;

function listener(): AgentLinkListener {
  return {
    onReady: () => events.push({ kind: 'ready' }),
    onAudio: (chunk) => events.push({ kind: 'audio', detail: chunk.length }),
    onMessage: (message) => events.push({ kind: 'message', detail: message.type }),
    onLost: (info) => events.push({ kind: 'lost', detail: info }),
  };
}

function link(opts: { maxQueuedAudioBytes?: number } = {}) {
  return new AgentLink(
    {
      dial: (settings) => dialer.dial(settings),
      settings: settingsFor,
      clock: realClock,
      metrics,
      logger: silentLogger(),
      maxQueuedAudioBytes: opts.maxQueuedAudioBytes ?? 64 * 1024,
      random: () => 0.5,
    },
    listener(),
  );
}

async function count(counter: Counter<string>, labels: Record<string, string> = {}): Promise<number> {
  const { values } = await counter.get();
  return values
    .filter((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want))
    .reduce((n, v) => n + v.value, 0);
}

beforeEach(() => {
  vi.useFakeTimers();
  metrics = createMetrics('test');
  dialer = fakeDialer();
  events = [];
});

afterEach(() => {
  vi.useRealTimers();
});

describe('the one queue for what waits for the agent', () => {
  it('holds caller audio and messages until SettingsApplied, then sends them in arrival order', async () => {
    // Invariant: nothing reaches the agent before SettingsApplied, and nothing queued is lost or reordered.
    const l = link();
    const a = Buffer.alloc(160, 1);
    const b = Buffer.alloc(160, 2);
    l.sendAudio(a); // before the dial
    await l.connect();
    const agent = dialer.last();
    l.send({ type: 'InjectAgentMessage', message: 'Are you still there?' });
    l.sendAudio(b);
    expect(agent.received).toEqual([]);
    expect(l.queued).toEqual({ audioBytes: 320, messages: 1 });

    agent.ready();
    expect(agent.received.map((r) => r.kind)).toEqual(['audio', 'message', 'audio']);
    expect(agent.receivedAudio().equals(Buffer.concat([a, b]))).toBe(true);
    expect(events).toEqual([{ kind: 'ready' }]);
    expect(l.queued).toEqual({ audioBytes: 0, messages: 0 });

    const c = Buffer.alloc(160, 3);
    l.sendAudio(c);
    expect(agent.received.at(-1)).toEqual({ kind: 'audio', bytes: c });
  });

  it('drops the oldest audio past its bound and counts each drop', async () => {
    const l = link({ maxQueuedAudioBytes: 480 });
    await l.connect();
    const frames = [1, 2, 3, 4, 5].map((n) => Buffer.alloc(160, n));
    for (const frame of frames) l.sendAudio(frame);
    expect(l.queued.audioBytes).toBe(480);
    expect(await count(metrics.audioDropped, { buffer: 'agent_queue' })).toBe(2);
    dialer.last().ready();
    expect(
      dialer
        .last()
        .receivedAudio()
        .equals(Buffer.concat(frames.slice(2))),
    ).toBe(true);
  });

  it('drops the oldest message past its bound and counts it, keeping the newest', async () => {
    const l = link();
    await l.connect();
    for (let i = 0; i < MAX_QUEUED_MESSAGES + 3; i++) l.send({ type: 'InjectUserMessage', content: `m${i}` });
    expect(l.queued.messages).toBe(MAX_QUEUED_MESSAGES);
    expect(await count(metrics.agentMessagesDropped)).toBe(3);
    dialer.last().ready();
    const sent = dialer
      .last()
      .messages()
      .map((m) => m.content);
    expect(sent[0]).toBe('m3');
    expect(sent.at(-1)).toBe(`m${MAX_QUEUED_MESSAGES + 2}`);
  });

  it('holds nothing once closed, and closes the agent', async () => {
    const l = link();
    await l.connect();
    l.sendAudio(Buffer.alloc(160));
    l.close();
    l.sendAudio(Buffer.alloc(160));
    l.send({ type: 'KeepAlive' });
    expect(l.queued).toEqual({ audioBytes: 0, messages: 0 });
    expect(dialer.last().closed).toBe(true);
    await Promise.resolve();
    expect(events).toEqual([]); // the link's own close is not a loss
  });
});

describe('pre-warmed sessions', () => {
  it('adopts a pre-warmed session without dialing, and flushes the queue when its held SettingsApplied is delivered', async () => {
    const l = link();
    const prewarmed = fakeAgent(settingsFor([]));
    prewarmed.ready(); // before the call attached: held by the session
    prewarmed.speak(Buffer.alloc(320)); // a greeting already on its way
    l.sendAudio(Buffer.alloc(160, 9));
    await l.connect(Promise.resolve(prewarmed));
    expect(dialer.dials).toHaveLength(0);
    expect(l.prewarmed).toBe(true);
    expect(l.state).toBe('ready');
    expect(prewarmed.receivedAudio().equals(Buffer.alloc(160, 9))).toBe(true);
    expect(events).toEqual([{ kind: 'ready' }, { kind: 'audio', detail: 320 }]);
  });

  it('dials when the pre-warm failed', async () => {
    const l = link();
    await l.connect(Promise.resolve(null));
    expect(dialer.dials).toHaveLength(1);
    expect(l.prewarmed).toBe(false);
  });

  it('closes an agent that arrives after the call ended', async () => {
    const l = link();
    const prewarmed = fakeAgent(settingsFor([]));
    let resolve: (agent: typeof prewarmed) => void = () => {};
    const pending = l.connect(new Promise((r) => (resolve = r)));
    l.close();
    resolve(prewarmed);
    await pending;
    expect(prewarmed.closed).toBe(true);
    expect(l.state).toBe('closed');
  });
});

describe('dialing at call start', () => {
  it('retries a refused handshake with backoff within the budget, then gives up with the refusal', async () => {
    dialer.script = Array.from({ length: 20 }, refused);
    const l = link();
    const outcome = l.connect().then(
      () => null,
      (err: { code: string }) => err.code,
    );
    await vi.advanceTimersByTimeAsync(5_000);
    expect(await outcome).toBe('CALLBRIDGE_AGENT_REFUSED');
    // 100, 200, 400, 800 ms then 1 s apart (jitter at its midpoint): dials at 0, 0.1, 0.3, 0.7, 1.5, 2.5 s.
    expect(dialer.dials).toHaveLength(6);
    expect(l.state).toBe('idle');
  });

  it('connects once a refusal clears', async () => {
    dialer.script = [refused(), refused()];
    const l = link();
    const connected = l.connect();
    await vi.advanceTimersByTimeAsync(300);
    await connected;
    expect(dialer.dials).toHaveLength(3);
    expect(l.state).toBe('configuring');
  });

  it('never retries rejected credentials', async () => {
    // Invariant: a 401/403 from the agent costs one dial, not a retry loop.
    dialer.script = [unauthorized(), unauthorized()];
    await expect(link().connect()).rejects.toMatchObject({ code: 'CALLBRIDGE_AGENT_UNAUTHORIZED' });
    expect(dialer.dials).toHaveLength(1);
  });

  it('retries another quick retryable failure once', async () => {
    dialer.script = [unreachable(), unreachable(), unreachable()];
    const l = link();
    const outcome = l.connect().catch((err: { code: string }) => err.code);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await outcome).toBe('CALLBRIDGE_AGENT_UNREACHABLE');
    expect(dialer.dials).toHaveLength(2);
  });

  it('does not retry a timeout: the caller has already waited for it', async () => {
    dialer.script = [timedOut()];
    await expect(link().connect()).rejects.toMatchObject({ code: 'CALLBRIDGE_AGENT_TIMEOUT' });
    expect(dialer.dials).toHaveLength(1);
  });

  it('states the rule as a function of the error alone', () => {
    const half = () => 0.5;
    expect(startRetryDelayMs(refused(), 0, half)).toBe(100);
    expect(startRetryDelayMs(refused(), 3, half)).toBe(800);
    expect(startRetryDelayMs(refused(), 9, half)).toBe(1000);
    expect(startRetryDelayMs(refused(), 0, () => 0)).toBe(50);
    expect(startRetryDelayMs(unreachable(), 0, half)).toBe(200);
    expect(startRetryDelayMs(unreachable(), 1, half)).toBeNull();
    expect(startRetryDelayMs(timedOut(), 0, half)).toBeNull();
    expect(startRetryDelayMs(unauthorized(), 0, half)).toBeNull();
    // Not one of ours: nothing says it is worth another try.
    expect(startRetryDelayMs(new Error('boom'), 0, half)).toBeNull();
    expect(startRetryDelayMs({ code: 'CALLBRIDGE_AGENT_REFUSED', retryable: false }, 0, half)).toBeNull();
  });
});

describe('redial after a drop', () => {
  const history: HistoryMessage[] = [{ type: 'History', role: 'user', content: 'Where is my order?' }];

  async function liveLink() {
    const l = link();
    await l.connect();
    dialer.last().ready();
    events = [];
    return l;
  }

  it('reports the loss, then redials at once with the history and flushes what waited', async () => {
    const l = await liveLink();
    dialer.last().drop({ code: 1011, reason: 'restarting' });
    expect(events).toEqual([{ kind: 'lost', detail: { code: 1011, reason: 'restarting' } }]);
    expect(l.state).toBe('idle');
    l.sendAudio(Buffer.alloc(160, 7));
    expect(await l.reconnect(history)).toBe(true);
    const second = dialer.last();
    expect(second.settings.agent.context?.messages).toEqual(history);
    expect(second.settings.agent.greeting).toBeUndefined();
    second.ready();
    expect(second.receivedAudio().equals(Buffer.alloc(160, 7))).toBe(true);
    expect(await count(metrics.agentReconnects, { outcome: 'ok' })).toBe(1);
  });

  it('follows the redial schedule while failures are retryable, then reports failure', async () => {
    const l = await liveLink();
    dialer.last().drop();
    dialer.script = Array.from({ length: 10 }, refused);
    const attached = l.reconnect(history);
    const total = RECONNECT_DELAYS_MS.reduce((a, b) => a + b, 0);
    await vi.advanceTimersByTimeAsync(total - 1);
    expect(dialer.dials).toHaveLength(1 + RECONNECT_DELAYS_MS.length - 1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await attached).toBe(false);
    expect(dialer.dials).toHaveLength(1 + RECONNECT_DELAYS_MS.length);
    expect(await count(metrics.agentReconnects, { outcome: 'failed' })).toBe(1);
    expect(l.state).toBe('idle');
  });

  it('stops at rejected credentials instead of running the schedule', async () => {
    // Invariant: a 401/403 on a redial is not retried five times.
    const l = await liveLink();
    dialer.last().drop();
    dialer.script = [unauthorized(), unauthorized()];
    expect(await l.reconnect(history)).toBe(false);
    expect(dialer.dials).toHaveLength(2);
  });

  it('stops when the call ends between attempts', async () => {
    const l = await liveLink();
    dialer.last().drop();
    dialer.script = [unreachable()];
    const attached = l.reconnect(history);
    await vi.advanceTimersByTimeAsync(0);
    l.close();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await attached).toBe(false);
    expect(dialer.dials).toHaveLength(2);
  });

  it("closes the session on the agent's Error and passes the message on", async () => {
    await liveLink();
    const agent = dialer.last();
    agent.say({ type: 'Error', code: 'SERVICE_TROUBLE', description: 'try again' });
    expect(agent.closed).toBe(true);
    expect(events[0]).toEqual({ kind: 'message', detail: 'Error' });
    await Promise.resolve();
    expect(events[1]).toMatchObject({ kind: 'lost', detail: { agentError: { code: 'SERVICE_TROUBLE' } } });
  });

  it('ignores a late close of a session it already replaced', async () => {
    const l = await liveLink();
    const first = dialer.last();
    first.drop();
    await l.reconnect(history);
    events = [];
    first.say({ type: 'ConversationText', role: 'assistant', content: 'stale' });
    expect(events).toEqual([]);
  });
});
