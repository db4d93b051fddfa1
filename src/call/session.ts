// One phone call: the carrier leg on one side, the voice agent on the other. It relays audio
// byte-exact both ways, turns `UserStartedSpeaking` into an immediate `clear`, tracks what the
// caller actually heard, runs the call's functions, keeps the agent connected through drops, and
// ends through one path that records why.
import type { Logger } from 'pino';
import type { AgentDialer } from '../agent/dialer.js';
import { classifyAgentError } from '../agent/errors.js';
import type {
  AgentClientMessage,
  AgentServerMessage,
  FunctionCallEntry,
  HistoryMessage,
} from '../agent/protocol.js';
import type { AgentCloseInfo, AgentHandlers, AgentSession } from '../agent/session.js';
import { buildSettings } from '../agent/settings.js';
import { OutboundFramer } from '../audio/framer.js';
import type { MediaFormat } from '../audio/format.js';
import type { AgentProfile } from '../config/types.js';
import { AgentConnectError } from '../errors.js';
import type { Metrics } from '../metrics/metrics.js';
import type { DownlinkRules } from './carrier-port.js';
import { DtmfCollector, dtmfMessage } from './dtmf.js';
import type { CallEventHub } from './events.js';
import { functionLabel, runFunction } from './functions.js';
import { HeardAudioTracker } from './heard-audio.js';
import type { CallLeg } from './leg.js';
import { PlayoutClock } from './playout.js';
import type { CallRecord, FunctionCallRecord, TurnRecord } from './record.js';
import { SilenceMonitor } from './silence.js';

/** Call states and the moves each allows (STYLE.md: explicit states, guarded transitions). */
export const CALL_TRANSITIONS = Object.freeze({
  connecting: ['configuring', 'ending'],
  configuring: ['live', 'reconnecting', 'ending'],
  live: ['reconnecting', 'ending'],
  reconnecting: ['configuring', 'ending'],
  ending: ['ended'],
  ended: [],
} as const satisfies Record<string, readonly string[]>);

export type CallState = keyof typeof CALL_TRANSITIONS;

export type EndReason =
  | 'caller_hangup'
  | 'end_call'
  | 'transferred'
  | 'silence_timeout'
  | 'max_duration'
  | 'agent_closed'
  | 'agent_error'
  | 'agent_unreachable'
  | 'agent_refused'
  | 'shutdown';

/** Reasons that start on the phone side: the carrier leg is already gone, nothing to hang up. */
const CARRIER_ENDED: ReadonlySet<EndReason> = new Set(['caller_hangup']);
/** Reasons where the service, not the conversation, ended the call. */
const FAILED: ReadonlySet<EndReason> = new Set([
  'agent_closed',
  'agent_error',
  'agent_unreachable',
  'agent_refused',
]);

/** What the agent is told to say when the call has to end for a reason of the line, not the talk. */
const FAREWELLS = {
  silence_timeout: "I haven't heard anything for a while, so I'll end the call now. Goodbye.",
  max_duration: "We've reached the time limit for this call, so I'll have to end it now. Goodbye.",
} as const;
export const SHUTDOWN_FAREWELL =
  "I'm sorry, I have to end the call now. Please call back in a moment. Goodbye.";
const CHECK_IN = 'Are you still there?';

/** How long a goodbye may take to be spoken and heard before the call is ended anyway. */
const FAREWELL_CAP_MS = 15_000;
/** After a function answer, how long the agent has to start speaking its last words. */
const REPLY_START_GRACE_MS = 2_000;
/** Agent reconnection: delays before each attempt; the first is immediate (issue: within a second). */
const RECONNECT_DELAYS_MS = [0, 250, 500, 1000, 2000];
/** 429 at call start: retries with jitter within this budget before the fallback is played. */
const REFUSED_RETRY_BUDGET_MS = 2_500;

export interface CallInfo {
  callSid: string;
  streamSid: string;
  carrier: string;
  direction: 'inbound' | 'outbound';
  from: string;
  to: string;
  profileName: string;
  profile: AgentProfile;
  mediaFormat: MediaFormat;
}

export interface CallDeps {
  dial: AgentDialer;
  metrics: Metrics;
  logger: Logger;
  events: CallEventHub;
  /** Outbound frame size in bytes (20 ms of the stream's format). */
  frameBytes: number;
  /** How the carrier wants audio sent to it. */
  downlink?: DownlinkRules;
  /** Caller audio held while the agent is dialed and configured; past it the oldest is dropped. */
  maxEarlyAudioBytes: number;
  /** Pre-rendered audio in the stream's format, played when no agent can be reached. */
  fallbackAudio: Buffer | null;
  onEnded(session: CallSession, record: CallRecord): void;
}

export function bytesPerMs(format: MediaFormat): number {
  const bytesPerSample = format.encoding === 'linear16' ? 2 : 1;
  return (format.sampleRate * bytesPerSample * format.channels) / 1000;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export class CallSession implements AgentHandlers {
  state: CallState = 'connecting';
  endReason: EndReason | null = null;
  readonly startedAt = new Date();
  readonly logger: Logger;
  private readonly startedMs = performance.now();
  private agent: AgentSession | null = null;
  private earlyAudio: Buffer[] = [];
  private earlyBytes = 0;
  /** Messages for the agent while none is connected (dialing, reconnecting), sent on adoption. */
  private earlyMessages: AgentClientMessage[] = [];
  /** Set by `UserStartedSpeaking`: audio of the interrupted reply must not reach the caller. */
  private muted = false;
  /** Between `AgentStartedSpeaking` and `AgentAudioDone` (or a barge-in). */
  private replying = false;
  private replyWaiters: Array<(event: 'started' | 'done') => void> = [];
  /** A polite end (goodbye, transfer) is under way: no second one starts. */
  private finishing = false;
  private readonly framer: OutboundFramer;
  private readonly playout: PlayoutClock;
  private readonly heard: HeardAudioTracker;
  private readonly silence: SilenceMonitor;
  private readonly dtmf: DtmfCollector | null;
  private maxDurationTimer: NodeJS.Timeout | null = null;
  private readonly audioCounts;
  private bargeIns = 0;
  private readonly turns: TurnRecord[] = [];
  /** Index in `turns` of each assistant reply, in the order the tracker numbers them. */
  private readonly replyTurns: number[] = [];
  private readonly functionCalls: FunctionCallRecord[] = [];
  private firstAudioMs: number | null = null;
  private agentConnectMs: number | null = null;
  private agentFirstAudioPending = true;
  private readonly agentReportedMs: number[] = [];
  private readonly perceivedMs: number[] = [];
  private callerSpeechEndedAt: number | null = null;
  private prewarmed = false;

  constructor(
    readonly info: CallInfo,
    private readonly leg: CallLeg,
    private readonly deps: CallDeps,
  ) {
    this.logger = deps.logger.child({ callSid: info.callSid, streamSid: info.streamSid });
    const rate = bytesPerMs(info.mediaFormat);
    this.framer = new OutboundFramer(deps.frameBytes);
    this.playout = new PlayoutClock(rate);
    this.heard = new HeardAudioTracker({ bytesPerMs: rate });
    const { limits, dtmf } = info.profile;
    this.silence = new SilenceMonitor({
      silencePromptMs: limits.silencePromptMs,
      silenceHangupMs: limits.silenceHangupMs,
      encoding: info.mediaFormat.encoding,
      sampleRate: info.mediaFormat.sampleRate,
      onPrompt: () => this.toAgent({ type: 'InjectAgentMessage', message: CHECK_IN }),
      onHangup: () => void this.finish('silence_timeout', FAREWELLS.silence_timeout),
      onSpeechEnd: () => {
        this.callerSpeechEndedAt = performance.now();
      },
    });
    this.dtmf = dtmf.enabled ? new DtmfCollector(dtmf, (digits) => this.onDigits(digits)) : null;
    if (limits.maxCallMs > 0) {
      this.maxDurationTimer = setTimeout(
        () => void this.finish('max_duration', FAREWELLS.max_duration),
        limits.maxCallMs,
      );
      this.maxDurationTimer.unref();
    }
    // Plain additions per frame; the counters pick them up when scraped (metrics.ts).
    this.audioCounts = deps.metrics.audio;
    deps.metrics.callsActive.inc({ carrier: info.carrier });
    deps.metrics.callsStarted.inc({ carrier: info.carrier, direction: info.direction });
  }

  get isEnding(): boolean {
    return this.state === 'ending' || this.state === 'ended';
  }

  /** Dials the agent, or adopts one dialed ahead of the stream (pre-warmed at the voice webhook). */
  async start(prewarmed?: Promise<AgentSession | null>): Promise<void> {
    let agent = prewarmed ? await prewarmed : null;
    this.prewarmed = agent !== null;
    if (!agent) {
      try {
        agent = await this.dialWithRetry([]);
      } catch (err) {
        await this.agentUnavailable(err);
        return;
      }
    }
    this.adopt(agent);
  }

  // ── carrier side ──────────────────────────────────────────────────────────

  onCallerAudio(payload: Buffer): void {
    this.audioCounts.upFrames++;
    this.audioCounts.upBytes += payload.length;
    this.silence.agentSpeaking(this.playout.isPlaying());
    this.silence.callerAudio(payload);
    if (this.agent && this.state !== 'reconnecting') {
      this.agent.sendAudio(payload);
      return;
    }
    if (this.isEnding) return;
    this.earlyAudio.push(payload);
    this.earlyBytes += payload.length;
    while (this.earlyBytes > this.deps.maxEarlyAudioBytes && this.earlyAudio.length > 0) {
      this.earlyBytes -= this.earlyAudio.shift()!.length;
      this.deps.metrics.audioDropped.inc({ buffer: 'call_early' });
    }
  }

  onCallerDtmf(digit: string): void {
    if (!this.dtmf) return;
    this.dtmf.push(digit);
  }

  onMarkPlayed(name: string): void {
    this.heard.markEchoed(name);
  }

  // ── agent side ────────────────────────────────────────────────────────────

  onReady(): void {
    if (this.state !== 'configuring') return;
    this.transition('live');
    if (this.agentConnectMs === null && this.agent?.settingsAppliedAtMs != null) {
      this.agentConnectMs = Math.round(this.agent.settingsAppliedAtMs - this.agent.dialStartedAtMs);
    }
  }

  onAudio(chunk: Buffer): void {
    if (this.muted || this.isEnding) return;
    const out = this.framer.push(chunk);
    if (out) this.sendToCaller(out);
  }

  onMessage(message: AgentServerMessage): void {
    switch (message.type) {
      case 'UserStartedSpeaking':
        this.bargeIn();
        break;
      case 'AgentStartedSpeaking':
        // A new reply: what follows is not the interrupted one.
        this.muted = false;
        this.replying = true;
        this.heard.startReply();
        this.observeAgentLatency(message);
        this.notifyReply('started');
        break;
      case 'AgentAudioDone':
        this.endOfReply();
        break;
      case 'ConversationText':
        this.onConversationText(message.role, String(message.content ?? ''));
        break;
      case 'FunctionCallRequest':
        for (const entry of Array.isArray(message.functions) ? message.functions : []) {
          if (entry?.client_side) void this.answerFunction(entry);
        }
        break;
      case 'Error':
        this.logger.warn(
          { agentError: { code: message.code, description: message.description } },
          'agent error',
        );
        // The session is over on the agent's side; what happens next is decided when it closes.
        this.agent?.close();
        break;
      case 'Warning':
        this.logger.info(
          { agentWarning: { code: message.code, description: message.description } },
          'agent warning',
        );
        break;
      default:
        break;
    }
  }

  onClose(info: AgentCloseInfo): void {
    if (this.isEnding || this.agent === null) return;
    this.agent = null;
    if (this.finishing) {
      // The goodbye was under way; nothing more will be said.
      this.end(this.endReason ?? 'agent_closed');
      return;
    }
    if (info.agentError && !classifyAgentError(info.agentError.code).retryable) {
      this.logger.warn({ code: info.agentError.code }, 'agent ended the session with a fatal error');
      void this.agentUnavailable(null, 'agent_error');
      return;
    }
    void this.reconnect(info);
  }

  // ── ending ────────────────────────────────────────────────────────────────

  /**
   * Ends the call politely: the agent says `farewell` (or finishes what it is saying), the bridge
   * waits until the carrier confirms it was played, then hangs up.
   */
  async finish(reason: EndReason, farewell?: string): Promise<void> {
    if (this.finishing || this.isEnding) return;
    this.finishing = true;
    this.endReason = reason;
    if (farewell && this.agent && this.state === 'live') {
      this.agent.send({ type: 'InjectAgentMessage', message: farewell });
      await this.waitForReply('started', REPLY_START_GRACE_MS * 2);
    }
    await this.lastWordsHeard(FAREWELL_CAP_MS);
    this.end(reason);
  }

  /** The one way a call ends. Idempotent: the first reason wins. */
  end(reason: EndReason): void {
    if (this.isEnding) return;
    this.transition('ending');
    this.endReason = reason;
    this.agent?.close();
    this.agent = null;
    if (reason === 'transferred') this.leg.closeStream();
    else if (!CARRIER_ENDED.has(reason)) this.leg.hangup();
    this.dispose();
    const record = this.record(reason);
    const { metrics } = this.deps;
    metrics.callsActive.dec({ carrier: this.info.carrier });
    metrics.callsTotal.inc({ carrier: this.info.carrier, direction: this.info.direction, reason });
    metrics.callDuration.observe(
      { carrier: this.info.carrier, direction: this.info.direction },
      record.durationMs / 1000,
    );
    this.deps.events.publish(this.info.callSid, { type: 'end', reason });
    this.logger.info(
      {
        call: {
          profile: this.info.profileName,
          direction: this.info.direction,
          reason,
          outcome: record.outcome,
          durationMs: record.durationMs,
          bargeIns: record.bargeIns,
          turns: record.turns.length,
          functionCalls: record.functionCalls.length,
          latency: record.latency,
          prewarmed: record.prewarmed,
        },
      },
      'call ended',
    );
    this.transition('ended');
    this.deps.onEnded(this, record);
  }

  // ── internals ─────────────────────────────────────────────────────────────

  private transition(next: CallState): void {
    const allowed: readonly string[] = CALL_TRANSITIONS[this.state];
    if (!allowed.includes(next)) throw new Error(`call cannot move from ${this.state} to ${next}`);
    this.state = next;
  }

  private adopt(agent: AgentSession): void {
    if (this.state !== 'connecting' && this.state !== 'reconnecting') {
      // The caller hung up while the agent was being dialed.
      agent.close();
      return;
    }
    this.agent = agent;
    this.transition('configuring');
    const early = this.earlyAudio;
    this.earlyAudio = [];
    this.earlyBytes = 0;
    for (const chunk of early) agent.sendAudio(chunk);
    for (const message of this.earlyMessages.splice(0)) agent.send(message);
    agent.attach(this);
  }

  /** Sends now, or holds the message until an agent is connected again (bounded). */
  private toAgent(message: AgentClientMessage): void {
    if (this.agent) this.agent.send(message);
    else if (!this.isEnding && this.earlyMessages.length < 32) this.earlyMessages.push(message);
  }

  private settingsFor(history: HistoryMessage[]) {
    return buildSettings(this.info.profile, this.info, this.info.mediaFormat, history);
  }

  /** Dials; a 429 is retried with jittered backoff within a short budget (PROTOCOLS.md section 1). */
  private async dialWithRetry(history: HistoryMessage[]): Promise<AgentSession> {
    const deadline = performance.now() + REFUSED_RETRY_BUDGET_MS;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.deps.dial(this.settingsFor(history), this.logger);
      } catch (err) {
        const refused = err instanceof AgentConnectError && err.status === 429;
        const delay = Math.min(1000, 100 * 2 ** attempt) * (0.5 + Math.random());
        if (!refused || this.isEnding || performance.now() + delay > deadline) throw err;
        await sleep(delay);
      }
    }
  }

  /**
   * The agent dropped mid-call: dial again at once, with the conversation so far as the caller
   * heard it and no second greeting, holding the caller's audio meanwhile (bounded).
   */
  private async reconnect(info: AgentCloseInfo): Promise<void> {
    this.transition('reconnecting');
    this.logger.warn({ code: info.code, reason: info.reason }, 'agent connection lost, reconnecting');
    this.muted = false;
    this.framer.reset();
    this.replying = false;
    this.notifyReply('done');
    const history = this.history();
    for (const delay of RECONNECT_DELAYS_MS) {
      if (delay > 0) await sleep(delay);
      if (this.isEnding) return;
      try {
        const agent = await this.deps.dial(this.settingsFor(history), this.logger);
        this.deps.metrics.agentReconnects.inc({ outcome: 'ok' });
        this.logger.info('agent reconnected');
        this.adopt(agent);
        return;
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, 'agent reconnect attempt failed');
      }
    }
    this.deps.metrics.agentReconnects.inc({ outcome: 'failed' });
    await this.agentUnavailable(null, 'agent_closed');
  }

  /** No agent can carry the call: the caller hears the fallback, or is transferred to a person. */
  private async agentUnavailable(err: unknown, reason?: EndReason): Promise<void> {
    const refused = err instanceof AgentConnectError && err.status === 429;
    const why: EndReason = reason ?? (refused ? 'agent_refused' : 'agent_unreachable');
    if (err) this.logger.warn({ err: (err as Error).message }, 'agent unavailable');
    if (this.isEnding || this.finishing) return;
    this.finishing = true;
    this.endReason = why;
    const { fallback } = this.info.profile;
    if (fallback.transferTo && this.leg.canTransfer) {
      try {
        await this.leg.transfer(fallback.transferTo);
        this.end('transferred');
        return;
      } catch (transferErr) {
        this.logger.error({ err: (transferErr as Error).message }, 'fallback transfer failed');
      }
    }
    if (this.deps.fallbackAudio && !this.isEnding) {
      this.muted = false;
      this.sendToCaller(this.deps.fallbackAudio);
      await this.heard.waitForMark(this.markNow(), this.playout.remainingMs() + 3_000);
    }
    this.end(why);
  }

  private onConversationText(role: string, content: string): void {
    if (role !== 'user' && role !== 'assistant') return;
    const atMs = Math.round(performance.now() - this.startedMs);
    if (role === 'assistant') {
      this.heard.setReplyText(content);
      this.replyTurns.push(this.turns.length);
    }
    this.turns.push({ role, content, interrupted: false, atMs });
    this.deps.events.publish(this.info.callSid, { type: 'transcript', role, content });
    this.logger.info({ transcript: { role, content } }, 'conversation');
  }

  private onDigits(digits: string): void {
    this.deps.metrics.dtmfEntries.inc();
    this.deps.events.publish(this.info.callSid, { type: 'dtmf', digits });
    this.logger.info({ dtmf: digits }, 'caller entered digits');
    this.toAgent({ type: 'InjectUserMessage', content: dtmfMessage(digits) });
  }

  private async answerFunction(entry: FunctionCallEntry): Promise<void> {
    const { profile } = this.info;
    const result = await runFunction(entry, {
      callSid: this.info.callSid,
      from: this.info.from,
      to: this.info.to,
      profileName: this.info.profileName,
      profile,
      canTransfer: this.leg.canTransfer,
      endCall: () => void this.finishAfterReply('end_call'),
      transfer: (target) => void this.transferAfterReply(target),
    });
    const label = functionLabel(entry.name, profile);
    this.deps.metrics.functionCalls.inc({ function: label, outcome: result.outcome });
    this.deps.metrics.functionDuration.observe(
      { function: label, outcome: result.outcome },
      result.durationMs / 1000,
    );
    this.functionCalls.push({
      name: String(entry.name).slice(0, 128),
      arguments: String(entry.arguments ?? '').slice(0, 4096),
      outcome: result.outcome,
      durationMs: result.durationMs,
      atMs: Math.round(performance.now() - this.startedMs),
    });
    this.deps.events.publish(this.info.callSid, {
      type: 'function',
      name: entry.name,
      outcome: result.outcome,
    });
    this.toAgent({ type: 'FunctionCallResponse', id: entry.id, name: entry.name, content: result.content });
  }

  /** end_call: the goodbye may still be coming or playing; hang up only once it has been heard. */
  private async finishAfterReply(reason: EndReason): Promise<void> {
    if (this.finishing || this.isEnding) return;
    this.finishing = true;
    this.endReason = reason;
    if (!this.replying) await this.waitForReply('started', REPLY_START_GRACE_MS);
    await this.lastWordsHeard(FAREWELL_CAP_MS);
    this.end(reason);
  }

  private async transferAfterReply(target: string): Promise<void> {
    if (this.finishing || this.isEnding) return;
    this.finishing = true;
    this.endReason = 'transferred';
    if (!this.replying) await this.waitForReply('started', REPLY_START_GRACE_MS);
    await this.lastWordsHeard(FAREWELL_CAP_MS);
    if (this.isEnding) return;
    try {
      await this.leg.transfer(target);
      this.logger.info({ target }, 'call transferred');
      this.end('transferred');
    } catch (err) {
      this.logger.error({ err: (err as Error).message, target }, 'transfer failed');
      this.finishing = false;
      this.endReason = null;
      this.toAgent({
        type: 'InjectAgentMessage',
        message: "I'm sorry, I couldn't transfer you just now. Is there anything else I can help with?",
      });
    }
  }

  /** Waits for the reply in progress to be sent, then for the caller to have heard all of it. */
  private async lastWordsHeard(capMs: number): Promise<void> {
    const deadline = performance.now() + capMs;
    if (this.replying) await this.waitForReply('done', capMs);
    if (this.isEnding) return;
    const left = Math.max(0, deadline - performance.now());
    await this.heard.waitForMark(this.markNow(), Math.min(left, this.playout.remainingMs() + 5_000));
  }

  /** Sends a mark after everything queued so far; its echo means all of it has played. */
  private markNow(): string {
    const rest = this.framer.flush();
    if (rest && !this.muted) this.sendToCaller(rest);
    const name = this.heard.endMark();
    this.leg.mark(name);
    return name;
  }

  private waitForReply(event: 'started' | 'done', timeoutMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.replyWaiters = this.replyWaiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      timer.unref();
      const waiter = (happened: 'started' | 'done') => {
        if (happened !== event) return;
        clearTimeout(timer);
        this.replyWaiters = this.replyWaiters.filter((w) => w !== waiter);
        resolve(true);
      };
      this.replyWaiters.push(waiter);
    });
  }

  private notifyReply(event: 'started' | 'done'): void {
    for (const waiter of [...this.replyWaiters]) waiter(event);
  }

  private endOfReply(): void {
    if (!this.muted) {
      const rest = this.framer.flush();
      if (rest) this.sendToCaller(rest);
      this.leg.mark(this.heard.endMark());
    }
    this.replying = false;
    this.notifyReply('done');
  }

  private sendToCaller(audio: Buffer): void {
    this.leg.sendAudio(audio);
    this.playout.queued(audio.length);
    this.audioCounts.downFrames++;
    this.audioCounts.downBytes += audio.length;
    const mark = this.heard.audioSent(audio.length);
    if (mark) this.leg.mark(mark);
    if (this.firstAudioMs === null) {
      this.firstAudioMs = Math.round(performance.now() - this.startedMs);
      this.deps.metrics.firstAudio.observe({ prewarmed: String(this.prewarmed) }, this.firstAudioMs / 1000);
    }
    if (this.agentFirstAudioPending && this.agent?.settingsAppliedAtMs != null) {
      this.agentFirstAudioPending = false;
      this.deps.metrics.agentFirstAudio.observe((performance.now() - this.agent.settingsAppliedAtMs) / 1000);
    }
    if (this.callerSpeechEndedAt !== null) {
      const waitedMs = performance.now() - this.callerSpeechEndedAt;
      this.callerSpeechEndedAt = null;
      this.perceivedMs.push(Math.round(waitedMs));
      this.deps.metrics.perceivedLatency.observe(waitedMs / 1000);
    }
  }

  private bargeIn(): void {
    // PROTOCOLS.md section 1 / CONTRACT: the carrier drops what it holds, and no more of the
    // interrupted reply is forwarded until the agent starts a new one.
    this.muted = true;
    this.framer.reset();
    this.leg.clear();
    this.heard.cleared();
    if (this.playout.isPlaying()) {
      this.bargeIns++;
      this.deps.metrics.bargeIns.inc();
      this.deps.events.publish(this.info.callSid, { type: 'barge-in' });
    }
    this.playout.clear();
    this.replying = false;
    this.notifyReply('done');
  }

  private observeAgentLatency(message: Extract<AgentServerMessage, { type: 'AgentStartedSpeaking' }>): void {
    const { agentReportedLatency } = this.deps.metrics;
    for (const [kind, value] of [
      ['total', message.total_latency],
      ['tts', message.tts_latency],
      ['ttt', message.ttt_latency],
    ] as const) {
      if (typeof value === 'number' && Number.isFinite(value) && value >= 0) {
        agentReportedLatency.observe({ kind }, value);
      }
    }
    if (typeof message.total_latency === 'number' && Number.isFinite(message.total_latency)) {
      this.agentReportedMs.push(Math.round(message.total_latency * 1000));
    }
  }

  /** The conversation so far as the caller heard it, for a resumed agent session. */
  private history(): HistoryMessage[] {
    return this.heardTurns()
      .filter((turn) => turn.content.trim() !== '')
      .map((turn) => ({ type: 'History', role: turn.role, content: turn.content }));
  }

  /** Turns with each assistant reply cut to what was heard. */
  private heardTurns(): TurnRecord[] {
    const turns = this.turns.map((turn) => ({ ...turn }));
    this.heard.replies().forEach((reply, i) => {
      const index = this.replyTurns[i];
      const turn = index === undefined ? undefined : turns[index];
      if (!turn) return;
      turn.sentMs = Math.round(reply.sentMs);
      turn.heardMs = Math.round(reply.heardMs);
      if (reply.interrupted) {
        turn.interrupted = true;
        turn.generated = turn.content;
        turn.content = reply.heardText;
      }
    });
    return turns;
  }

  private record(reason: EndReason): CallRecord {
    const endedAt = new Date();
    return {
      callSid: this.info.callSid,
      streamSid: this.info.streamSid,
      carrier: this.info.carrier,
      direction: this.info.direction,
      from: this.info.from,
      to: this.info.to,
      profile: this.info.profileName,
      startedAt: this.startedAt.toISOString(),
      endedAt: endedAt.toISOString(),
      durationMs: endedAt.getTime() - this.startedAt.getTime(),
      endReason: reason,
      outcome: FAILED.has(reason) ? 'failed' : 'completed',
      bargeIns: this.bargeIns,
      turns: this.heardTurns(),
      functionCalls: this.functionCalls,
      latency: {
        firstAudioMs: this.firstAudioMs,
        agentConnectMs: this.agentConnectMs,
        agentReportedMs: this.agentReportedMs,
        perceivedMs: this.perceivedMs,
      },
      prewarmed: this.prewarmed,
    };
  }

  private dispose(): void {
    if (this.maxDurationTimer) clearTimeout(this.maxDurationTimer);
    this.silence.dispose();
    this.dtmf?.dispose();
    this.heard.dispose();
    this.earlyAudio = [];
    this.notifyReply('done');
    this.notifyReply('started');
    this.replyWaiters = [];
  }
}
