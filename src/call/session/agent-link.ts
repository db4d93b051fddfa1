// The call's way to the voice agent: dials it (retrying a refused handshake within a budget),
// adopts a session pre-warmed at the voice webhook, redials with the conversation so far when it
// drops, and holds in ONE bounded queue (agent-queue.ts) everything that waits for an agent: caller
// audio and control messages, while none is connected or it has not answered `SettingsApplied`
// (docs/protocols/agent.md: anything sent earlier is ignored). Past the bound the oldest entry of
// the same kind is dropped and counted; on `SettingsApplied` the queue goes out in arrival order.
//
// Which failures are tried again is decided by the error's `retryable` and `code`, never by an
// HTTP status: a refused handshake (CALLBRIDGE_AGENT_REFUSED, the agent's concurrency limit,
// which clears as calls end) is retried with jittered backoff within `REFUSED_RETRY_BUDGET_MS`;
// a timeout (CALLBRIDGE_AGENT_TIMEOUT) is not retried at call start, since the caller has already
// waited a whole connect timeout in silence; any other retryable failure (unreachable, a 5xx
// answer, a failed grant: quick to fail, so cheap to try again) once more after a short pause,
// within the same budget; a failure that is not retryable (CALLBRIDGE_AGENT_UNAUTHORIZED: 401/403,
// other 4xx answers) never, since the same request fails the same way. A redial after a drop
// follows `RECONNECT_DELAYS_MS` while failures are retryable and stops at the first that is not.
//
// An agent that opens but never answers `SettingsApplied` within `SETTINGS_APPLIED_TIMEOUT_MS` is
// closed and reported lost with `settingsTimedOut`: it cannot carry the call, and the call decides.
import type { Logger } from 'pino';
import type {
  AgentClientMessage,
  AgentServerMessage,
  HistoryMessage,
  SettingsMessage,
} from '../../agent/protocol.js';
import type { AgentChannel, AgentCloseInfo } from '../../agent/session.js';
import type { Metrics } from '../../metrics/metrics.js';
import { type Clock, type ClockTimer, sleep } from '../clock.js';
import { backoffDelayMs, retryableOf } from '../../retry.js';
import { AgentQueue } from './agent-queue.js';

export { MAX_QUEUED_MESSAGES } from './agent-queue.js';

/** Dials one agent session for the call with these settings. */
export type DialAgent = (settings: SettingsMessage, logger: Logger) => Promise<AgentChannel>;

/** Agent redial after a drop: delays before each attempt; the first is immediate. */
export const RECONNECT_DELAYS_MS: readonly number[] = Object.freeze([0, 250, 500, 1000, 2000]);
/** At call start, retries end once this much time has gone by since the first dial. */
export const REFUSED_RETRY_BUDGET_MS = 2_500;
/** From adopting a session to its `SettingsApplied`: past it, the session counts as failed. */
export const SETTINGS_APPLIED_TIMEOUT_MS = 5_000;

export const LINK_TRANSITIONS = Object.freeze({
  // A pre-warmed session is adopted straight from idle.
  idle: ['dialing', 'configuring', 'closed'],
  dialing: ['configuring', 'idle', 'closed'],
  configuring: ['ready', 'idle', 'closed'],
  ready: ['idle', 'closed'],
  closed: [],
} as const satisfies Record<string, readonly string[]>);

export type LinkState = keyof typeof LINK_TRANSITIONS;

/** Why the agent session is gone. */
export interface LinkLostInfo extends AgentCloseInfo {
  /** The session opened but never answered `SettingsApplied` in time; the link closed it. */
  settingsTimedOut?: true;
}

/** What the link reports to the call. */
export interface AgentLinkListener {
  /** `SettingsApplied`: the queue has gone out; the agent hears the caller from now on. */
  onReady(): void;
  onAudio(chunk: Buffer): void;
  onMessage(message: AgentServerMessage): void;
  /** The agent session ended; whether to redial is the call's decision. */
  onLost(info: LinkLostInfo): void;
}

export interface AgentLinkOptions {
  dial: DialAgent;
  /** Settings for a session that resumes `history` (empty: a new conversation, with the greeting). */
  settings(history: HistoryMessage[]): SettingsMessage;
  clock: Clock;
  metrics: Pick<
    Metrics,
    'audioDropped' | 'agentMessagesDropped' | 'agentReconnects' | 'agentSettingsTimeouts'
  >;
  logger: Logger;
  /** Caller audio held while no agent is ready; past it the oldest is dropped and counted. */
  maxQueuedAudioBytes: number;
  /**
   * The queue to keep (agent-queue.ts), where the caller's first frames already wait since the
   * stream's `start`; default: a new one bounded by `maxQueuedAudioBytes`.
   */
  queue?: AgentQueue;
  /** Jitter source in [0, 1). */
  random?: () => number;
  /** Default `SETTINGS_APPLIED_TIMEOUT_MS`. */
  settingsTimeoutMs?: number;
}

/** The code of a typed error, or '' for anything else. */
function errorCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

function isRetryable(err: unknown): boolean {
  return retryableOf(err) === true;
}

/** A refused handshake (429) is dialed again after 100 ms, 200, 400 … up to a second, jittered. */
const REFUSED_BACKOFF = { firstDelayMs: 100, maxDelayMs: 1_000 };

/**
 * The pause before dialing again after `err` at call start (`attempt` counts from 0), or null when
 * it is not worth another try. See the rule at the top of this file.
 */
export function startRetryDelayMs(err: unknown, attempt: number, random: () => number): number | null {
  if (!isRetryable(err)) return null;
  const code = errorCode(err);
  if (code === 'CALLBRIDGE_AGENT_REFUSED') {
    return backoffDelayMs(attempt + 1, REFUSED_BACKOFF, { random, spread: 0.5 });
  }
  if (code === 'CALLBRIDGE_AGENT_TIMEOUT') return null;
  return attempt === 0 ? 200 * (0.5 + random()) : null;
}

export class AgentLink {
  #state: LinkState = 'idle';
  #agent: AgentChannel | null = null;
  #prewarmed = false;
  #connectMs: number | null = null;
  readonly #opts: AgentLinkOptions;
  readonly #listener: AgentLinkListener;
  readonly #random: () => number;
  readonly #queue: AgentQueue;
  #settingsTimer: ClockTimer | null = null;

  constructor(opts: AgentLinkOptions, listener: AgentLinkListener) {
    this.#opts = opts;
    this.#listener = listener;
    this.#random = opts.random ?? Math.random;
    this.#queue = opts.queue ?? new AgentQueue(opts.maxQueuedAudioBytes, opts.metrics);
  }

  get state(): LinkState {
    return this.#state;
  }

  /** Whether the call adopted a session dialed at the voice webhook. */
  get prewarmed(): boolean {
    return this.#prewarmed;
  }

  /** Dial to `SettingsApplied` of the first agent session, once known. */
  get connectMs(): number | null {
    return this.#connectMs;
  }

  /** `SettingsApplied` of the current agent session, on its own clock; null while none is ready. */
  get settingsAppliedAtMs(): number | null {
    return this.#state === 'ready' ? (this.#agent?.settingsAppliedAtMs ?? null) : null;
  }

  /** What waits for the agent: audio bytes and messages. */
  get queued(): { audioBytes: number; messages: number } {
    return { audioBytes: this.#queue.audioBytes, messages: this.#queue.messages };
  }

  /**
   * Adopts the pre-warmed session when there is one, else dials (with the start retries). Resolves
   * once an agent is attached; rejects with the last dial error when none could be reached.
   */
  async connect(prewarmed?: Promise<AgentChannel | null>): Promise<void> {
    const agent = prewarmed ? await prewarmed : null;
    if (agent) {
      this.#prewarmed = true;
      this.#adopt(agent);
      return;
    }
    if (this.#closed()) return;
    this.#move('dialing');
    let dialed: AgentChannel;
    try {
      dialed = await this.#dialWithRetry();
    } catch (err) {
      if (this.#state === 'dialing') this.#move('idle');
      throw err;
    }
    this.#adopt(dialed);
  }

  /**
   * Redials after a drop with the conversation so far. Resolves true once a new session is
   * attached, false when every attempt failed, a failure was not retryable, or the link closed.
   */
  async reconnect(history: HistoryMessage[]): Promise<boolean> {
    const { logger, metrics } = this.#opts;
    if (this.#state !== 'idle') return false;
    this.#move('dialing');
    for (const delayMs of RECONNECT_DELAYS_MS) {
      if (delayMs > 0) await sleep(this.#opts.clock, delayMs);
      if (this.#closed()) return false;
      try {
        const agent = await this.#opts.dial(this.#opts.settings(history), logger);
        if (this.#closed()) {
          agent.close(); // the call ended while the agent was being dialed
          return false;
        }
        metrics.agentReconnects.inc({ outcome: 'ok' });
        logger.info('agent reconnected');
        this.#adopt(agent);
        return true;
      } catch (err) {
        logger.warn({ err: (err as Error).message, code: errorCode(err) }, 'agent reconnect attempt failed');
        if (!isRetryable(err)) break;
      }
    }
    if (this.#closed()) return false;
    this.#move('idle');
    metrics.agentReconnects.inc({ outcome: 'failed' });
    return false;
  }

  /** Caller audio: to the agent when it is ready, else into the queue. Runs on every frame. */
  sendAudio(chunk: Buffer): void {
    if (this.#state === 'ready') {
      this.#agent!.sendAudio(chunk);
      return;
    }
    if (this.#closed()) return;
    this.#queue.audio(chunk);
  }

  send(message: AgentClientMessage): void {
    if (this.#state === 'ready') {
      this.#agent!.send(message);
      return;
    }
    if (this.#closed()) return;
    this.#queue.message(message);
  }

  /** The call is over: the agent session is closed and nothing more is dialed or queued. */
  close(): void {
    if (this.#closed()) return;
    this.#move('closed');
    this.#clearSettingsTimer();
    this.#agent?.close();
    this.#agent = null;
    this.#queue.clear();
  }

  /** Read through a method: the state changes across awaits, which narrowing cannot see. */
  #closed(): boolean {
    return this.#state === 'closed';
  }

  #move(next: LinkState): void {
    const allowed: readonly string[] = LINK_TRANSITIONS[this.#state];
    if (!allowed.includes(next)) throw new Error(`agent link cannot move from ${this.#state} to ${next}`);
    this.#state = next;
  }

  async #dialWithRetry(): Promise<AgentChannel> {
    const { clock, dial, logger } = this.#opts;
    const deadline = clock.now() + REFUSED_RETRY_BUDGET_MS;
    for (let attempt = 0; ; attempt++) {
      try {
        return await dial(this.#opts.settings([]), logger);
      } catch (err) {
        const delayMs = startRetryDelayMs(err, attempt, this.#random);
        if (delayMs === null || this.#closed() || clock.now() + delayMs > deadline) throw err;
        logger.debug({ code: errorCode(err), delayMs: Math.round(delayMs) }, 'agent dial failed, retrying');
        await sleep(clock, delayMs);
      }
    }
  }

  #adopt(agent: AgentChannel): void {
    if (this.#closed()) {
      // The call ended while the agent was being dialed.
      agent.close();
      return;
    }
    this.#agent = agent;
    this.#move('configuring');
    // Set before attach: a pre-warmed session that is ready already answers inside attach.
    this.#settingsTimer = this.#opts.clock.setTimeout(
      () => this.#settingsTimedOut(agent),
      this.#opts.settingsTimeoutMs ?? SETTINGS_APPLIED_TIMEOUT_MS,
    );
    // Audio goes straight to the call; the link sees readiness, messages and the close first.
    agent.attach({
      onReady: () => this.#onReady(agent),
      onAudio: (chunk) => this.#listener.onAudio(chunk),
      onMessage: (message) => this.#onMessage(agent, message),
      onClose: (info) => this.#onClose(agent, info),
    });
  }

  #onReady(agent: AgentChannel): void {
    if (this.#agent !== agent || this.#state !== 'configuring') return;
    this.#clearSettingsTimer();
    this.#move('ready');
    if (this.#connectMs === null && agent.settingsAppliedAtMs !== null) {
      this.#connectMs = Math.round(agent.settingsAppliedAtMs - agent.dialStartedAtMs);
    }
    this.#queue.drainTo(agent);
    this.#listener.onReady();
  }

  #onMessage(agent: AgentChannel, message: AgentServerMessage): void {
    if (this.#agent !== agent) return;
    // docs/protocols/agent.md: an `Error` is fatal for the session; what follows is decided on close.
    if (message.type === 'Error') agent.close();
    this.#listener.onMessage(message);
  }

  #onClose(agent: AgentChannel, info: AgentCloseInfo): void {
    if (this.#agent !== agent || this.#closed()) return;
    this.#clearSettingsTimer();
    this.#agent = null;
    this.#move('idle');
    this.#listener.onLost(info);
  }

  #settingsTimedOut(agent: AgentChannel): void {
    this.#settingsTimer = null;
    if (this.#agent !== agent || this.#state !== 'configuring') return;
    const timeoutMs = this.#opts.settingsTimeoutMs ?? SETTINGS_APPLIED_TIMEOUT_MS;
    this.#opts.logger.warn({ timeoutMs }, 'agent did not answer SettingsApplied in time');
    this.#opts.metrics.agentSettingsTimeouts.inc();
    this.#agent = null;
    this.#move('idle');
    agent.close(1000, 'no SettingsApplied');
    this.#listener.onLost({
      code: 1006,
      reason: `no SettingsApplied within ${timeoutMs} ms`,
      settingsTimedOut: true,
    });
  }

  #clearSettingsTimer(): void {
    if (this.#settingsTimer === null) return;
    this.#opts.clock.clearTimeout(this.#settingsTimer);
    this.#settingsTimer = null;
  }
}
