// One phone call: the carrier leg on one side, the voice agent on the other. The session holds the
// call's state table and composes the parts that do the work: the agent link (agent-link.ts), the
// downlink to the caller (downlink.ts), the call log (call-log.ts), the polite endings
// (endings.ts), an outbound call's answering machine (answering-machine.ts), the latency figures
// (latency.ts), the function calls (function-calls.ts), keypad and silence, the agent's messages
// (agent-messages.ts) and the listeners on its audio (audio-fanout.ts). It moves the call through
// its states (call-states.ts), routes the carrier's and the agent's events to the parts, and owns
// the one path that ends the call and records why (end-reason.ts, ended-call.ts).
import type { Logger } from 'pino';
import { classifyAgentError } from '../../agent/errors.js';
import type { HistoryMessage } from '../../agent/protocol.js';
import { buildSettings } from '../../agent/settings.js';
import type { AgentChannel } from '../../agent/session.js';
import { AgentUpdater } from '../../agent/updates.js';
import type { Metrics } from '../../metrics/metrics.js';
import { AgentLink, type LinkLostInfo } from './agent-link.js';
import { AgentMessages } from './agent-messages.js';
import type { AgentQueue } from './agent-queue.js';
import type { VerdictReport } from '../outbound/amd-gate.js';
import type { AnsweringMachine } from '../outbound/answering-machine.js';
import { AudioFanout } from '../watch/audio-fanout.js';
import type { CallAudioListener } from '../audio-listener.js';
import { CallLog } from '../record/call-log.js';
import { type Clock, type ClockTimer, realClock } from '../clock.js';
import { Downlink } from '../downlink/downlink.js';
import { DtmfCollector, dtmfMessage } from './dtmf.js';
import { END_REASONS, type EndReason } from '../record/end-reason.js';
import { reportEnded, withOutbound } from '../record/ended-call.js';
import { type Ending, Endings, type EndingsHost } from './endings.js';
import { FunctionCalls } from '../functions/function-calls.js';
import { LatencyObserver } from './latency.js';
import type { CallLeg } from '../leg.js';
import type { SilenceMonitor } from './silence.js';
import { callAnsweringMachine, callSilenceMonitor } from './call-watchers.js';
import { playConsent } from './consent.js';
import { canMove, type CallState, type Phase } from './call-states.js';
import type { CallDeps, CallInfo } from './call-info.js';

export type { EndReason } from '../record/end-reason.js';
export type { CallDeps, CallInfo } from './call-info.js';
export { CALL_TRANSITIONS, type CallState } from './call-states.js';
export type { CallAudioListener } from '../audio-listener.js';
export { AMD_VERDICT_TIMEOUT_MS } from '../outbound/answering-machine.js';

/** What the agent is told to say when the call has to end for a reason of the line, not the talk. */
const FAREWELLS = {
  silence_timeout: "I haven't heard anything for a while, so I'll end the call now. Goodbye.",
  max_duration: "We've reached the time limit for this call, so I'll have to end it now. Goodbye.",
} as const;
export const SHUTDOWN_FAREWELL =
  "I'm sorry, I have to end the call now. Please call back in a moment. Goodbye.";
const CHECK_IN = 'Are you still there?';

/** What the endings and the answering machine may do to the call. */
type SessionHost = EndingsHost & { closeAgent(): void };

export class CallSession {
  readonly logger: Logger;
  #phase: Phase = { state: 'connecting' };
  readonly #leg: CallLeg;
  readonly #deps: CallDeps;
  readonly #clock: Clock;
  /** When the call started, on `#clock`: the origin of the call's own clock. */
  readonly #startedAtMs: number;
  readonly #link: AgentLink;
  readonly #updater: AgentUpdater;
  readonly #downlink: Downlink;
  readonly #log: CallLog;
  readonly #silence: SilenceMonitor;
  readonly #dtmf: DtmfCollector | null;
  readonly #endings: Endings;
  /** Outbound calls with detection: holds the agent back until the verdict. */
  readonly #machine: AnsweringMachine | null;
  readonly #latency: LatencyObserver;
  readonly #messages: AgentMessages;
  readonly #audioCounts: Metrics['audio'];
  /** The call's audio to its listeners (a recorder, a supervisor listening in). */
  readonly #audio: AudioFanout;
  #maxDurationTimer: ClockTimer | null = null;

  constructor(
    readonly info: CallInfo,
    leg: CallLeg,
    deps: CallDeps,
  ) {
    this.#leg = leg;
    this.#deps = deps;
    const clock = deps.clock ?? realClock;
    this.#clock = clock;
    this.#startedAtMs = clock.now();
    this.logger = deps.logger.child({ callSid: info.callSid, streamSid: info.streamSid });
    const { metrics } = deps;
    // Plain additions per frame; the counters pick them up when scraped (metrics.ts).
    this.#audioCounts = metrics.audio;
    this.#log = new CallLog(info, clock);
    this.#downlink = new Downlink({
      leg,
      rules: deps.downlink,
      format: info.mediaFormat,
      clock,
      counts: this.#audioCounts,
      onPacedDropped: (bytes) => {
        metrics.audioDropped.inc({ buffer: 'downlink_paced' }, Math.ceil(bytes / deps.downlink.frameBytes));
      },
    });
    this.#link = new AgentLink(
      {
        dial: deps.dial,
        // A redialed agent gets the voice, model and listener functions switched to mid-call.
        settings: (history: HistoryMessage[]) =>
          this.#updater.applyTo(buildSettings(info.profile, info, info.mediaFormat, history)),
        clock,
        metrics,
        logger: this.logger,
        maxQueuedAudioBytes: deps.maxEarlyAudioBytes,
        ...(deps.heldAudio ? { queue: deps.heldAudio } : {}),
      },
      {
        onReady: () => this.#agentReady(),
        onAudio: (chunk) => this.#agentAudio(chunk),
        onMessage: (message) => this.#messages.route(message),
        onLost: (closeInfo) => this.#agentLost(closeInfo),
      },
    );
    this.#updater = new AgentUpdater((update) => this.#link.send(update), {
      timers: {
        setTimeout: (fn, ms) => clock.setTimeout(fn, ms),
        clearTimeout: (handle) => clock.clearTimeout(handle as ClockTimer),
      },
    });
    const { limits, dtmf, fallback } = info.profile;
    this.#silence = callSilenceMonitor(info, clock, {
      // The agent's default: refused while the caller speaks, and then no longer needed.
      prompt: () => this.#link.send({ type: 'InjectAgentMessage', message: CHECK_IN }),
      hangup: () => void this.finish('silence_timeout', FAREWELLS.silence_timeout),
      speechEnded: (atMs) => this.#latency.callerSpeechEnded(atMs),
    });
    this.#dtmf = dtmf.enabled ? new DtmfCollector(dtmf, (digits) => this.#digits(digits), clock) : null;
    const host = this.#endingsHost();
    this.#endings = new Endings({
      host,
      leg,
      downlink: this.#downlink,
      agent: this.#link,
      format: info.mediaFormat,
      fallbackTransferTo: fallback.transferTo ?? null,
      fallbackAudio: deps.fallbackAudio,
      ...(deps.prompts ? { prompts: deps.prompts } : {}),
      logger: this.logger,
    });
    this.#machine = callAnsweringMachine(info, deps, {
      clock,
      answeredAtMs: this.#startedAtMs,
      logger: this.logger,
      host,
      hearing: this.#silence,
      speech: this.#endings,
      downlink: this.#downlink,
    });
    this.#latency = new LatencyObserver({
      metrics,
      log: this.#log,
      clock,
      carrier: info.carrier,
      answeredAtMs: this.#startedAtMs,
      view: {
        personAnswered: () => this.#machine?.personAnswered ?? false,
        prewarmed: () => this.#link.prewarmed,
        settingsAppliedAtMs: () => this.#link.settingsAppliedAtMs,
      },
    });
    const functions = new FunctionCalls({
      call: info,
      canTransfer: leg.canTransfer,
      log: this.#log,
      metrics,
      events: deps.events,
      logger: this.logger,
      updater: this.#updater,
      send: (message) => this.#link.send(message),
      endAfterReply: () => void this.#endings.endAfterReply(),
      transferAfterReply: (target) => void this.#endings.transferAfterReply(target),
      ...(deps.recording ? { recording: (action) => deps.recording!.control(action) } : {}),
    });
    this.#messages = new AgentMessages({
      callSid: info.callSid,
      updater: this.#updater,
      downlink: this.#downlink,
      latency: this.#latency,
      machine: this.#machine,
      log: this.#log,
      endings: this.#endings,
      functions,
      metrics,
      events: deps.events,
      logger: this.logger,
    });
    if (limits.maxCallMs > 0) {
      this.#maxDurationTimer = clock.setTimeout(
        () => void this.finish('max_duration', FAREWELLS.max_duration),
        limits.maxCallMs,
      );
    }
    this.#audio = new AudioFanout((tap) => this.#downlink.tap(tap), this.#startedAtMs, this.logger);
    for (const listener of deps.audioListeners ?? []) this.listen(listener);
    if (deps.heldAudio) this.#takeHeldAudio(deps.heldAudio);
    metrics.callsActive.inc({ carrier: info.carrier });
    metrics.callsStarted.inc({ carrier: info.carrier, direction: info.direction });
  }

  /** The answering-machine verdict of the carrier's detection, once it comes. */
  get machineVerdict(): VerdictReport | null {
    return this.#machine?.verdict ?? null;
  }

  get state(): CallState {
    return this.#phase.state;
  }

  /** Why the call ended, or is ending politely; null while it goes on. */
  get endReason(): EndReason | null {
    const phase = this.#phase;
    if (phase.state === 'finishing') return phase.ending.reason;
    if (phase.state === 'ending' || phase.state === 'ended') return phase.reason;
    return null;
  }

  get startedAt(): Date {
    return this.#log.startedAt;
  }

  get isEnding(): boolean {
    return this.#phase.state === 'ending' || this.#phase.state === 'ended';
  }

  /** Dials the agent, or adopts one dialed ahead of the stream (pre-warmed at the voice webhook). */
  async start(prewarmed?: Promise<AgentChannel | null>): Promise<void> {
    const consent = this.#deps.recording?.consent ?? null;
    if (consent !== null) {
      const played = await playConsent(consent, {
        format: this.info.mediaFormat,
        downlink: this.#downlink,
        ...(this.#deps.prompts ? { prompts: this.#deps.prompts } : {}),
        ...(this.#deps.voicemailRecordings ? { voicemailRecordings: this.#deps.voicemailRecordings } : {}),
        logger: this.logger,
        onPlay: (text) => this.#log.turn('assistant', text, 'consent'),
      });
      // No consent heard, no recording.
      if (!played) this.#deps.recording!.abandon('the consent prompt could not be played');
      if (this.isEnding) return;
    }
    try {
      await this.#link.connect(prewarmed);
    } catch (err) {
      await this.#agentUnavailable(err);
    }
  }

  /**
   * Adds a listener on the call's audio (audio-listener.ts) until the call ends or the returned
   * function removes it. Times are milliseconds since the call started.
   */
  listen(listener: CallAudioListener): () => void {
    if (this.isEnding) return () => {};
    return this.#audio.add(listener);
  }

  // ── carrier side ──────────────────────────────────────────────────────────

  /**
   * The caller's frames held since the stream's start, already in the queue the link keeps: each
   * is heard as `onCallerAudio` hears a frame, and what the agent hears of it takes its place.
   * (Written out again rather than shared, so the per-frame path below stays one flat method.)
   */
  #takeHeldAudio(queue: AgentQueue): void {
    queue.mapAudio((payload) => this.#heard(payload));
  }

  /** A caller frame: on every 20 ms of every call, so nothing here allocates. */
  onCallerAudio(payload: Buffer): void {
    // The session alone writes to the agent; an answering machine only says what it hears.
    this.#link.sendAudio(this.#heard(payload));
  }

  /** A caller frame counted, heard by the listeners and the silence monitor; what the agent gets. */
  #heard(payload: Buffer): Buffer {
    this.#audioCounts.upFrames++;
    this.#audioCounts.upBytes += payload.length;
    if (this.#audio.listening) this.#audio.callerFrame(payload, this.#clock.now());
    this.#silence.agentSpeaking(this.#downlink.isPlaying());
    this.#silence.callerAudio(payload);
    return this.#machine === null ? payload : this.#machine.screen(payload);
  }

  /**
   * The carrier's answering-machine verdict (docs/protocols/answering-machine-detection.md), for
   * the answering machine to act on.
   */
  onMachineVerdict(report: VerdictReport): void {
    this.#machine?.verdictReported(report);
  }

  onCallerDtmf(digit: string): void {
    this.#dtmf?.push(digit);
  }

  onMarkPlayed(name: string): void {
    this.#downlink.markPlayed(name);
  }

  // ── ending ────────────────────────────────────────────────────────────────

  /**
   * Ends the call politely: the agent says `farewell` (or finishes what it is saying), the bridge
   * waits until the carrier confirms it was played, then hangs up.
   */
  finish(reason: EndReason, farewell?: string): Promise<void> {
    return this.#endings.goodbye(reason, farewell, this.#phase.state === 'live');
  }

  /** An operator hangs up the call (admin API): at once, no goodbye. */
  hangup(): void {
    this.end('operator_hangup');
  }

  /**
   * An operator moves the call to `target` (admin API) at once. Throws when the carrier cannot
   * transfer, a polite end is already under way, or the carrier refused (the call goes on).
   */
  transfer(target: string): Promise<void> {
    return this.#endings.transferNow(target);
  }

  /** The one way a call ends. Idempotent: the first reason wins. */
  end(reason: EndReason): void {
    if (!this.#can('ending')) return;
    this.#move({ state: 'ending', reason });
    this.#machine?.close();
    this.#updater.close();
    this.#link.close();
    const { by } = END_REASONS[reason];
    if (by === 'transfer') this.#leg.closeStream();
    else if (by === 'bridge') this.#leg.hangup();
    if (this.#maxDurationTimer !== null) this.#clock.clearTimeout(this.#maxDurationTimer);
    this.#silence.dispose();
    this.#dtmf?.dispose();
    this.#downlink.close();
    this.#audio.close();
    const record = withOutbound(
      this.#log.record(reason, this.#downlink.replies(), this.#link.prewarmed),
      this.info.outbound,
      this.#machine,
    );
    reportEnded(record, this.info, reason, { ...this.#deps, logger: this.logger });
    this.#move({ state: 'ended', reason });
    this.#deps.onEnded(this, record);
  }

  // ── state ─────────────────────────────────────────────────────────────────

  #can(next: CallState): boolean {
    return canMove(this.#phase.state, next);
  }

  #move(next: Phase): void {
    if (!this.#can(next.state))
      throw new Error(`call cannot move from ${this.#phase.state} to ${next.state}`);
    this.#phase = next;
  }

  /** What the endings and the answering machine may do to the call's state. */
  #endingsHost(): SessionHost {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- read by the getter below
    const session = this;
    return {
      begin: (ending) => this.#begin(ending),
      end: (reason) => this.end(reason),
      get isEnding() {
        return session.isEnding;
      },
      resume: () => this.#resume(),
      closeAgent: () => this.#link.close(),
    };
  }

  /** Enters `finishing` for `ending`; false when a polite end is under way or the call is ending. */
  #begin(ending: Ending): boolean {
    const phase = this.#phase;
    if (phase.state !== 'connecting' && phase.state !== 'live' && phase.state !== 'reconnecting')
      return false;
    this.#move({ state: 'finishing', ending, from: phase.state, agentGone: null });
    return true;
  }

  /**
   * A transfer failed: the call goes back to the state it left, with the agent if one is ready,
   * and whatever happened to the agent meanwhile is dealt with now. True when an agent carries
   * the call (and can be told).
   */
  #resume(): boolean {
    const phase = this.#phase;
    if (phase.state !== 'finishing') return false;
    const ready = this.#link.state === 'ready';
    // An agent that became ready meanwhile makes the call live; none ready, it waits as it did.
    this.#move({ state: ready ? 'live' : phase.from });
    const gone = phase.agentGone;
    if (gone === null) return ready;
    if ('lost' in gone) this.#agentLost(gone.lost);
    else void this.#agentUnavailable(null, gone.unavailable);
    return false;
  }

  // ── agent side ────────────────────────────────────────────────────────────

  #agentReady(): void {
    // A redialed session's Settings carried the updates the dropped one never acknowledged.
    this.#updater.settingsApplied();
    const connectMs = this.#link.connectMs;
    if (connectMs !== null) this.#log.agentConnected(connectMs);
    const { state } = this.#phase;
    if (state === 'connecting' || state === 'reconnecting') this.#move({ state: 'live' });
  }

  #agentAudio(chunk: Buffer): void {
    // No closure per chunk unless an answering machine may hold it.
    if (this.#machine !== null && this.#machine.withholds(() => this.#sendAgentAudio(chunk), chunk.length)) {
      return;
    }
    this.#sendAgentAudio(chunk);
  }

  #sendAgentAudio(chunk: Buffer): void {
    if (this.#downlink.audio(chunk) > 0) this.#latency.audioSent();
  }

  #agentLost(info: LinkLostInfo): void {
    const phase = this.#phase;
    if (this.isEnding) return;
    if (phase.state === 'finishing') {
      // A transfer decides the call's fate; should it fail, the loss is dealt with then.
      if (phase.ending.kind === 'transfer') phase.agentGone = { lost: info };
      // A goodbye was under way; nothing more will be said.
      else this.end(phase.ending.reason);
      return;
    }
    if (info.settingsTimedOut) {
      // An agent that never acknowledged its Settings cannot carry the call: the fallback.
      void this.#agentUnavailable(null, 'agent_unreachable');
      return;
    }
    // In-session errors: the agent's `Error` code says whether a new session could do better.
    if (info.agentError && !classifyAgentError(info.agentError.code).retryable) {
      this.logger.warn({ code: info.agentError.code }, 'agent ended the session with a fatal error');
      void this.#agentUnavailable(null, 'agent_error');
      return;
    }
    void this.#reconnect(info);
  }

  /**
   * The agent dropped mid-call: dial again at once, with the conversation so far as the caller
   * heard it and no second greeting; the link holds the caller's audio meanwhile.
   */
  async #reconnect(info: LinkLostInfo): Promise<void> {
    if (this.#phase.state !== 'reconnecting') this.#move({ state: 'reconnecting' });
    this.logger.warn({ code: info.code, reason: info.reason }, 'agent connection lost, reconnecting');
    this.#downlink.reset();
    const attached = await this.#link.reconnect(this.#log.history(this.#downlink.replies()));
    if (!attached && !this.isEnding) await this.#agentUnavailable(null, 'agent_closed');
  }

  /** No agent can carry the call: the caller hears the fallback, or is transferred to a person. */
  async #agentUnavailable(err: unknown, reason?: EndReason): Promise<void> {
    const code = (err as { code?: unknown } | null)?.code;
    const why: EndReason =
      reason ?? (code === 'CALLBRIDGE_AGENT_REFUSED' ? 'agent_refused' : 'agent_unreachable');
    if (err) this.logger.warn({ err: (err as Error).message, code }, 'agent unavailable');
    const phase = this.#phase;
    if (phase.state === 'finishing' && phase.ending.kind === 'transfer') {
      phase.agentGone = { unavailable: why };
      return;
    }
    await this.#endings.fallback(why);
  }

  #digits(digits: string): void {
    this.#deps.metrics.dtmfEntries.inc();
    this.#deps.events.publish(this.info.callSid, { type: 'dtmf', digits });
    // The digits only under `dtmf`, kept by the logger only when LOG_TRANSCRIPTS=on.
    this.logger.info({ keys: digits.length, dtmf: digits }, 'caller entered digits');
    this.#link.send({ type: 'InjectUserMessage', content: dtmfMessage(digits) });
  }
}
