// Fakes for driving the call core without sockets: a phone leg that records what it is told, an
// agent session the test speaks for, and a dialer that answers each dial as the test scripted.
// Time is whatever vi.useFakeTimers says: the real clock reads the (faked) globals.
import pino from 'pino';
import type { AgentServerMessage, SettingsMessage } from '../../src/agent/protocol.js';
import type { AgentChannel, AgentCloseInfo, AgentHandlers } from '../../src/agent/session.js';
import type { CallLeg } from '../../src/call/leg.js';
import { AgentConnectError } from '../../src/errors.js';

export type LegCommand =
  { kind: 'audio'; bytes: Buffer } | { kind: 'clear' } | { kind: 'mark'; name: string };

export interface FakeLeg extends CallLeg {
  commands: LegCommand[];
  hangups: number;
  streamsClosed: number;
  transfers: string[];
  /** Makes the next transfers fail. */
  failTransfers: boolean;
  audio(): Buffer;
  marks(): string[];
  /** Echoes every mark sent so far that was not echoed yet, as the carrier does once played. */
  echoMarks(onMark: (name: string) => void): void;
}

export function fakeLeg(opts: { canTransfer?: boolean } = {}): FakeLeg {
  let echoed = 0;
  const leg: FakeLeg = {
    commands: [],
    hangups: 0,
    streamsClosed: 0,
    transfers: [],
    failTransfers: false,
    canTransfer: opts.canTransfer ?? true,
    sendAudio: (payload) => leg.commands.push({ kind: 'audio', bytes: Buffer.from(payload) }),
    clear: () => leg.commands.push({ kind: 'clear' }),
    mark: (name) => leg.commands.push({ kind: 'mark', name }),
    hangup: () => {
      leg.hangups++;
    },
    closeStream: () => {
      leg.streamsClosed++;
    },
    transfer: async (target) => {
      if (leg.failTransfers) throw new Error('transfer refused');
      leg.transfers.push(target);
    },
    audio: () => Buffer.concat(leg.commands.flatMap((c) => (c.kind === 'audio' ? [c.bytes] : []))),
    marks: () => leg.commands.flatMap((c) => (c.kind === 'mark' ? [c.name] : [])),
    echoMarks: (onMark) => {
      const marks = leg.marks();
      for (const name of marks.slice(echoed)) onMark(name);
      echoed = marks.length;
    },
  };
  return leg;
}

export interface FakeAgent extends AgentChannel {
  isReady: boolean;
  isClosed: boolean;
  settingsAppliedAtMs: number | null;
  settings: SettingsMessage;
  /** Caller audio and messages the agent received, in order. */
  received: Array<{ kind: 'audio'; bytes: Buffer } | { kind: 'message'; type: string; message: unknown }>;
  closed: boolean;
  receivedAudio(): Buffer;
  messages(type?: string): Array<Record<string, unknown>>;
  /** `SettingsApplied`. */
  ready(): void;
  speak(chunk: Buffer): void;
  say(message: AgentServerMessage | Record<string, unknown>): void;
  /** The session ends on the agent's side. */
  drop(info?: Partial<AgentCloseInfo>): void;
}

export function fakeAgent(settings: SettingsMessage): FakeAgent {
  let handlers: AgentHandlers | null = null;
  let fatal: AgentCloseInfo['agentError'];
  const held: Array<(h: AgentHandlers) => void> = [];
  const emit = (deliver: (h: AgentHandlers) => void) => {
    if (handlers) deliver(handlers);
    else held.push(deliver);
  };
  const agent: FakeAgent = {
    settings,
    received: [],
    closed: false,
    isReady: false,
    isClosed: false,
    dialStartedAtMs: performance.now(),
    settingsAppliedAtMs: null,
    attach(h) {
      handlers = h;
      for (const deliver of held.splice(0)) deliver(h);
    },
    sendAudio(chunk) {
      if (!agent.isReady || agent.closed) return;
      agent.received.push({ kind: 'audio', bytes: Buffer.from(chunk) });
    },
    send(message) {
      if (!agent.isReady || agent.closed) return;
      agent.received.push({ kind: 'message', type: message.type, message });
    },
    close() {
      if (agent.closed) return;
      agent.closed = true;
      agent.isClosed = true;
      // As a socket does: the close event comes after the closing handshake, not inside close().
      const info: AgentCloseInfo = { code: 1000, reason: 'closed by the bridge' };
      if (fatal) info.agentError = fatal;
      queueMicrotask(() => emit((h) => h.onClose(info)));
    },
    receivedAudio: () => Buffer.concat(agent.received.flatMap((r) => (r.kind === 'audio' ? [r.bytes] : []))),
    messages: (type) =>
      agent.received.flatMap((r) =>
        r.kind === 'message' && (type === undefined || r.type === type)
          ? [r.message as Record<string, unknown>]
          : [],
      ),
    ready() {
      agent.isReady = true;
      agent.settingsAppliedAtMs = performance.now();
      emit((h) => h.onReady());
    },
    speak: (chunk) => emit((h) => h.onAudio(chunk)),
    say: (message) => {
      const m = message as AgentServerMessage;
      // A fatal `Error` is remembered, so the close carries the agent's reason (agent/session.ts).
      if (m.type === 'Error')
        fatal = { code: String(m.code ?? ''), description: String(m.description ?? '') };
      emit((h) => h.onMessage(m));
    },
    drop(info = {}) {
      if (agent.closed) return;
      agent.closed = true;
      agent.isClosed = true;
      emit((h) => h.onClose({ code: 1006, reason: '', ...info }));
    },
  };
  return agent;
}

/** What one dial returns: a new agent (the default), or this error. */
export type DialOutcome = 'agent' | Error;

export interface FakeDialer {
  dial(settings: SettingsMessage): Promise<AgentChannel>;
  /** Outcomes of the next dials, in order; once used up every dial connects. */
  script: DialOutcome[];
  /** Every dial's settings, and the agent it returned if any. */
  dials: Array<{ settings: SettingsMessage; agent: FakeAgent | null }>;
  agents(): FakeAgent[];
  last(): FakeAgent;
}

export function fakeDialer(script: DialOutcome[] = []): FakeDialer {
  const dialer: FakeDialer = {
    script,
    dials: [],
    async dial(settings) {
      const outcome = dialer.script.shift() ?? 'agent';
      if (outcome instanceof Error) {
        dialer.dials.push({ settings, agent: null });
        throw outcome;
      }
      const agent = fakeAgent(settings);
      dialer.dials.push({ settings, agent });
      return agent;
    },
    agents: () => dialer.dials.flatMap((d) => (d.agent ? [d.agent] : [])),
    last: () => {
      const agents = dialer.agents();
      const agent = agents[agents.length - 1];
      if (!agent) throw new Error('no agent was dialed');
      return agent;
    },
  };
  return dialer;
}

export const refused = () =>
  new AgentConnectError('agent refused the connection: too many concurrent sessions', {
    code: 'CALLBRIDGE_AGENT_REFUSED',
    retryable: true,
    status: 429,
  });

export const unauthorized = () =>
  new AgentConnectError('agent rejected the credentials (HTTP 401)', {
    code: 'CALLBRIDGE_AGENT_UNAUTHORIZED',
    retryable: false,
    status: 401,
  });

export const unreachable = () =>
  new AgentConnectError('agent unreachable: connect ECONNREFUSED', {
    code: 'CALLBRIDGE_AGENT_UNREACHABLE',
    retryable: true,
  });

export const timedOut = () =>
  new AgentConnectError('agent did not answer within 5000 ms', {
    code: 'CALLBRIDGE_AGENT_TIMEOUT',
    retryable: true,
  });

export const silentLogger = () => pino({ level: 'silent' });
