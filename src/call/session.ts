// One phone call: the carrier leg on one side, the voice agent on the other. The session composes
// the agent link (agent-link.ts), the downlink to the caller (downlink.ts) and the call log
// (call-log.ts); it owns the call's state table, the functions, keypad and silence, the polite
// endings, and the one path that ends the call and records why.
import type { Logger } from 'pino';
import { classifyAgentError } from '../agent/errors.js';
import { readLatencyReport } from '../agent/latency-report.js';
import type {
  AgentServerMessage,
  FunctionCallEntry,
  HistoryMessage,
  InjectBehavior,
} from '../agent/protocol.js';
import { buildSettings } from '../agent/settings.js';
import type { AgentChannel } from '../agent/session.js';
import { AgentUpdater } from '../agent/updates.js';
import { type MediaFormat, silenceByte } from '../audio/format.js';
import type { AgentProfile } from '../config/types.js';
import type { Metrics } from '../metrics/metrics.js';
import { AgentLink, type DialAgent, type LinkLostInfo } from './agent-link.js';
import { AmdGate, type GateDecision, type VerdictReport } from './amd-gate.js';
import { GreetingEnd } from './greeting-end.js';
import { CallLog, type EndReason } from './call-log.js';
import type { DownlinkRules } from './carrier-port.js';
import { type Clock, type ClockTimer, realClock } from './clock.js';
import { Downlink } from './downlink.js';
import { DtmfCollector, dtmfMessage } from './dtmf.js';
import type { CallEventHub } from './events.js';
import type { PromptPlayer } from './fallback-audio.js';
import { functionLabel, runFunction } from './functions.js';
import type { CallLeg } from './leg.js';
import type { OutboundContext } from './outbound-context.js';
import type { CallRecord, VoicemailRecord } from '../store/call-record.js';
import { SilenceMonitor } from './silence.js';
import type { VoicemailRecordingSource } from './voicemail-recordings.js';

export type { EndReason } from './call-log.js';

/**
 * Call states and the moves each allows. `finishing` is a polite end under way (a goodbye, the
 * hang-up or transfer after the agent's last reply, the fallback when no agent can carry the
 * call): no second one starts, and a transfer that fails hands the call back to the agent.
 */
export const CALL_TRANSITIONS = Object.freeze({
  connecting: ['live', 'reconnecting', 'finishing', 'ending'],
  live: ['reconnecting', 'finishing', 'ending'],
  reconnecting: ['live', 'finishing', 'ending'],
  finishing: ['live', 'ending'],
  ending: ['ended'],
  ended: [],
} as const satisfies Record<string, readonly string[]>);

export type CallState = keyof typeof CALL_TRANSITIONS;

/** Reasons that start on the phone side: the carrier leg is already gone, nothing to hang up. */
const CARRIER_ENDED: ReadonlySet<EndReason> = new Set(['caller_hangup']);

/** What the agent is told to say when the call has to end for a reason of the line, not the talk. */
const FAREWELLS = {
  silence_timeout: "I haven't heard anything for a while, so I'll end the call now. Goodbye.",
  max_duration: "We've reached the time limit for this call, so I'll have to end it now. Goodbye.",
} as const;
export const SHUTDOWN_FAREWELL =
  "I'm sorry, I have to end the call now. Please call back in a moment. Goodbye.";
const CHECK_IN = 'Are you still there?';
const TRANSFER_FAILED =
  "I'm sorry, I couldn't transfer you just now. Is there anything else I can help with?";

/** How long a goodbye may take to be spoken and heard before the call is ended anyway. */
const FAREWELL_CAP_MS = 15_000;
/** After a function answer, how long the agent has to start speaking its last words. */
const REPLY_START_GRACE_MS = 2_000;
/** The fallback message: how long past its own length the bridge waits for it to be heard. */
const FALLBACK_SLACK_MS = 3_000;
/**
 * With no verdict this long after the answer, the answerer is taken for a person (or, for a machine
 * whose greeting never seemed to end, the message starts). Past the carriers' own detection
 * timeouts (Twilio's default is 30 s).
 */
export const AMD_VERDICT_TIMEOUT_MS = 35_000;
/** How long the voicemail may take to be heard before the call hangs up anyway. */
const VOICEMAIL_CAP_MS = 90_000;

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
  /** Outbound calls: the campaign attempt, the contact's variables, answering-machine detection. */
  outbound?: OutboundContext;
  /** The campaign an outbound call was placed for, when one placed it. */
  campaign?: string;
}

export interface CallDeps {
  /** Dials one agent session (agent/dialer.ts's AgentDialer fits). */
  dial: DialAgent;
  metrics: Metrics;
  logger: Logger;
  events: CallEventHub;
  /** How the carrier wants audio sent (its adapter's `downlink(format)`). */
  downlink: DownlinkRules;
  /** Caller audio held while no agent is ready; past it the oldest is dropped and counted. */
  maxEarlyAudioBytes: number;
  /** The profile's own recording in the stream's format, played when no agent can be reached. */
  fallbackAudio: Buffer | null;
  /**
   * The fixed prompts a caller hears without an agent (rendered, else bundled): the "unavailable"
   * message when the profile has no recording of its own, the goodbye of a drain with no agent.
   */
  prompts?: PromptPlayer;
  /** Outbound calls: the pre-recorded voicemails of `amd.voicemail.audioUrl`, fetched once. */
  voicemailRecordings?: VoicemailRecordingSource;
  onEnded(session: CallSession, record: CallRecord): void;
  /** Time and timers; the process clock unless a test gives its own. */
  clock?: Clock;
}

export class CallSession {
  readonly logger: Logger;
  #state: CallState = 'connecting';
  #endReason: EndReason | null = null;
  /** The reason a polite end under way will record. */
  #finishingReason: EndReason | null = null;
  readonly #leg: CallLeg;
  readonly #deps: CallDeps;
  readonly #clock: Clock;
  readonly #link: AgentLink;
  readonly #updater: AgentUpdater;
  /** Settles the wait for an injected goodbye when the agent refuses to say it. */
  #injectionRefused: (() => void) | null = null;
  readonly #downlink: Downlink;
  readonly #log: CallLog;
  readonly #silence: SilenceMonitor;
  readonly #dtmf: DtmfCollector | null;
  readonly #audioCounts: Metrics['audio'];
  #maxDurationTimer: ClockTimer | null = null;
  /** Outbound calls with detection: holds the agent back until the verdict. */
  readonly #gate: AmdGate | null;
  /** Where the carrier reports no end of greeting, the audio tells it (greeting-end.ts). */
  readonly #greetingEnd = new GreetingEnd();
  #gateTimer: ClockTimer | null = null;
  readonly #answeredAtMs: number;
  /** A person's wait for the agent's first audio, measured once. */
  #humanWaitPending = true;
  #agentFirstAudioPending = true;
  /** When the caller last stopped speaking, until the agent's answer starts to play. */
  #callerSpeechEndedAt: number | null = null;
  /** What the agent hears in place of the answerer's frames while they are muted (#silenceLike). */
  #silenceFrame: Buffer | null = null;
  /** A machine's call: how its voicemail was left, or why none was. */
  #voicemail: VoicemailRecord | null = null;

  constructor(
    readonly info: CallInfo,
    leg: CallLeg,
    deps: CallDeps,
  ) {
    this.#leg = leg;
    this.#deps = deps;
    const clock = deps.clock ?? realClock;
    this.#clock = clock;
    this.logger = deps.logger.child({ callSid: info.callSid, streamSid: info.streamSid });
    // Plain additions per frame; the counters pick them up when scraped (metrics.ts).
    this.#audioCounts = deps.metrics.audio;
    this.#log = new CallLog(info, clock);
    this.#downlink = new Downlink({
      leg,
      rules: deps.downlink,
      format: info.mediaFormat,
      clock,
      counts: this.#audioCounts,
    });
    this.#link = new AgentLink(
      {
        dial: deps.dial,
        // A redialed agent gets the voice, model and listener functions switched to mid-call.
        settings: (history: HistoryMessage[]) =>
          this.#updater.applyTo(buildSettings(info.profile, info, info.mediaFormat, history)),
        clock,
        metrics: deps.metrics,
        logger: this.logger,
        maxQueuedAudioBytes: deps.maxEarlyAudioBytes,
      },
      {
        onReady: () => this.#agentReady(),
        onAudio: (chunk) => this.#agentAudio(chunk),
        onMessage: (message) => this.#agentMessage(message),
        onLost: (closeInfo) => this.#agentLost(closeInfo),
      },
    );
    this.#updater = new AgentUpdater((update) => this.#link.send(update), {
      timers: {
        setTimeout: (fn, ms) => clock.setTimeout(fn, ms),
        clearTimeout: (handle) => clock.clearTimeout(handle as ClockTimer),
      },
    });
    const { limits, dtmf } = info.profile;
    this.#silence = new SilenceMonitor({
      silencePromptMs: limits.silencePromptMs,
      silenceHangupMs: limits.silenceHangupMs,
      encoding: info.mediaFormat.encoding,
      sampleRate: info.mediaFormat.sampleRate,
      // The agent's default: refused while the caller speaks, and then no longer needed.
      onPrompt: () => this.#link.send({ type: 'InjectAgentMessage', message: CHECK_IN }),
      onHangup: () => void this.finish('silence_timeout', FAREWELLS.silence_timeout),
      // The monitor dates the end to the last voiced frame, not to when its detector was sure.
      onSpeechEnd: (atMs) => {
        this.#callerSpeechEndedAt = atMs;
      },
      nowMs: () => clock.now(),
      setTimer: (callback, delayMs) => {
        const timer = clock.setTimeout(callback, delayMs);
        return () => clock.clearTimeout(timer);
      },
    });
    this.#dtmf = dtmf.enabled ? new DtmfCollector(dtmf, (digits) => this.#digits(digits), clock) : null;
    if (limits.maxCallMs > 0) {
      this.#maxDurationTimer = clock.setTimeout(
        () => void this.finish('max_duration', FAREWELLS.max_duration),
        limits.maxCallMs,
      );
    }
    this.#answeredAtMs = clock.now();
    const amd = info.outbound?.amd ?? null;
    this.#gate = amd ? new AmdGate(amd) : null;
    if (this.#gate) {
      this.#gateTimer = clock.setTimeout(() => this.#verdictTimedOut(), AMD_VERDICT_TIMEOUT_MS);
    }
    deps.metrics.callsActive.inc({ carrier: info.carrier });
    deps.metrics.callsStarted.inc({ carrier: info.carrier, direction: info.direction });
  }

  /** The answering-machine verdict of the carrier's detection, once it comes. */
  get machineVerdict(): VerdictReport | null {
    return this.#gate?.verdict ?? null;
  }

  get state(): CallState {
    return this.#state;
  }

  /** Why the call ended, or is ending politely; null while it goes on. */
  get endReason(): EndReason | null {
    return this.#endReason ?? this.#finishingReason;
  }

  get startedAt(): Date {
    return this.#log.startedAt;
  }

  get isEnding(): boolean {
    return this.#state === 'ending' || this.#state === 'ended';
  }

  /** Dials the agent, or adopts one dialed ahead of the stream (pre-warmed at the voice webhook). */
  async start(prewarmed?: Promise<AgentChannel | null>): Promise<void> {
    try {
      await this.#link.connect(prewarmed);
    } catch (err) {
      await this.#agentUnavailable(err);
    }
  }

  // ── carrier side ──────────────────────────────────────────────────────────

  /**
   * Silence the size of a caller frame, made once and sent as often as needed (never written to):
   * while a verdict is awaited the agent hears it in place of every frame.
   */
  #silenceLike(payload: Buffer): Buffer {
    if (this.#silenceFrame?.length !== payload.length) {
      this.#silenceFrame = Buffer.alloc(payload.length, silenceByte(this.info.mediaFormat.encoding));
    }
    return this.#silenceFrame;
  }

  onCallerAudio(payload: Buffer): void {
    this.#audioCounts.upFrames++;
    this.#audioCounts.upBytes += payload.length;
    this.#silence.agentSpeaking(this.#downlink.isPlaying());
    this.#silence.callerAudio(payload);
    // Until the verdict the agent hears silence: a voicemail greeting must not start a conversation,
    // nor a recorder's beep interrupt the message left on it.
    if (this.#gate?.mutesAnswerer) {
      this.#link.sendAudio(this.#silenceLike(payload));
      if (!this.#gate.holds) return;
      const fellSilent = this.#greetingEnd.observe(this.#silence.callerSpeaking, this.#silence.silenceMs);
      if (fellSilent && this.#gate.awaitingMessageEnd) {
        this.onMachineVerdict({
          verdict: 'machine',
          messageEnded: true,
          detectionMs: null,
          raw: 'greeting_silent',
        });
      }
      return;
    }
    this.#link.sendAudio(payload);
  }

  /**
   * The carrier's answering-machine verdict (docs/protocols/answering-machine-detection.md). A
   * person, or doubt, and the agent speaks at once; a machine, and the voicemail plays after the
   * beep, or the call hangs up.
   */
  onMachineVerdict(report: VerdictReport): void {
    if (!this.#gate || this.isEnding) return;
    // A machine's greeting end completes its first verdict; the verdict is counted once.
    const first = this.#gate.verdict === null;
    const decision = this.#gate.decide(report);
    if (decision.kind === 'none') return;
    if (decision.kind !== 'wait_for_message_end') this.#stopGateTimer();
    const { metrics } = this.#deps;
    const { carrier } = this.info;
    if (first) {
      metrics.amdVerdicts.inc({ carrier, verdict: report.verdict });
      metrics.amdDetection.observe(
        { carrier, verdict: report.verdict },
        (report.detectionMs ?? this.#clock.now() - this.#answeredAtMs) / 1000,
      );
    }
    this.logger.info(
      { amd: { verdict: report.verdict, raw: report.raw, decision: decision.kind } },
      'answering-machine verdict',
    );
    this.#act(decision);
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
  async finish(reason: EndReason, farewell?: string): Promise<void> {
    const wasLive = this.#state === 'live';
    if (!this.#startFinishing(reason)) return;
    let said: 'started' | 'refused' | 'timeout' | 'not_asked' | 'no_agent' = wasLive
      ? 'not_asked'
      : 'no_agent';
    if (farewell && wasLive) said = await this.#sayFarewell(farewell);
    if (reason === 'shutdown' && (said === 'no_agent' || said === 'refused')) {
      // No agent to say it (still dialing, redialing, or it declined): the drain's own recording.
      // The agent has nothing more to do on this call; closed now, it cannot cut the goodbye short.
      this.#link.close();
      await this.#playPrompt('drain_goodbye');
    }
    await this.#downlink.lastWordsHeard(FAREWELL_CAP_MS);
    this.end(reason);
  }

  /** An operator hangs up the call (admin API): at once, no goodbye. */
  hangup(): void {
    this.end('operator_hangup');
  }

  /**
   * An operator moves the call to `target` (admin API) at once. Throws when the carrier cannot
   * transfer, a polite end is already under way, or the carrier refused (the call goes on).
   */
  async transfer(target: string): Promise<void> {
    if (!this.#leg.canTransfer) throw new Error('this carrier has no call-control API configured');
    if (!this.#startFinishing('transferred')) throw new Error('the call is already ending');
    await this.#transfer(target);
  }

  /** The one way a call ends. Idempotent: the first reason wins. */
  end(reason: EndReason): void {
    if (!this.#can('ending')) return;
    this.#move('ending');
    this.#endReason = reason;
    this.#stopGateTimer();
    this.#gate?.close();
    this.#updater.close();
    this.#link.close();
    if (reason === 'transferred') this.#leg.closeStream();
    else if (!CARRIER_ENDED.has(reason)) this.#leg.hangup();
    if (this.#maxDurationTimer !== null) this.#clock.clearTimeout(this.#maxDurationTimer);
    this.#silence.dispose();
    this.#dtmf?.dispose();
    this.#downlink.close();
    const record = this.#withOutbound(
      this.#log.record(reason, this.#downlink.replies(), this.#link.prewarmed),
    );
    const { metrics, events } = this.#deps;
    const { carrier, direction } = this.info;
    metrics.callsActive.dec({ carrier });
    metrics.callsTotal.inc({ carrier, direction, reason });
    metrics.callDuration.observe({ carrier, direction }, record.durationMs / 1000);
    events.publish(this.info.callSid, { type: 'end', reason });
    this.logger.info(
      {
        call: {
          profile: this.info.profileName,
          direction,
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
    this.#move('ended');
    this.#deps.onEnded(this, record);
  }

  // ── internals ─────────────────────────────────────────────────────────────

  #withOutbound(record: CallRecord): CallRecord {
    const outbound = this.info.outbound;
    if (!outbound) return record;
    const verdict = this.#gate?.verdict ?? null;
    return {
      ...record,
      outbound: {
        campaign: outbound.campaignId,
        contact: outbound.contact,
        attempt: outbound.attemptId,
        answeredBy: verdict === null ? null : verdict.verdict === 'fax' ? 'machine' : verdict.verdict,
        amdVerdict: verdict?.raw ?? null,
        ...(this.#voicemail ? { voicemail: this.#voicemail } : {}),
      },
    };
  }

  #act(decision: GateDecision): void {
    switch (decision.kind) {
      case 'hang_up':
        this.end('machine');
        return;
      case 'leave_message':
        void this.#leaveMessage(decision.text, decision.audioUrl);
        return;
      default:
        return;
    }
  }

  /**
   * Leaves the voicemail after the beep, then hangs up once it was heard: the recording at the
   * campaign's audio URL; else its text as a rendered prompt (config/prompts.json); else the text
   * spoken by the agent. Nothing to leave (a recording that cannot be played and no text) hangs up
   * as `machine`, the reason in the record.
   */
  async #leaveMessage(text: string | null, audioUrl: string | null): Promise<void> {
    if (!this.#startFinishing('voicemail_left')) return;
    let problem: string | null = null;
    if (audioUrl !== null) {
      const recording = await this.#voicemailRecording(audioUrl);
      if ('audio' in recording) {
        await this.#playMessage(recording.audio, 'recording', null);
        return;
      }
      problem = recording.problem;
      this.logger.warn(
        { problem, fallback: text ? 'text' : 'hangup' },
        'the voicemail recording cannot be played',
      );
    }
    if (this.isEnding) return;
    if (text === null || text.trim() === '') {
      this.#voicemail = { left: null, problem: problem ?? 'the call has no voicemail text' };
      this.logger.warn(
        { problem: this.#voicemail.problem },
        'a machine answered but no voicemail can be left: hanging up',
      );
      this.end('machine');
      return;
    }
    const rendered = await this.#renderedVoicemail(text);
    if (rendered) {
      await this.#playMessage(rendered, 'rendered', problem);
      return;
    }
    if (this.isEnding) return;
    if ((await this.#sayFarewell(text)) === 'refused') {
      this.#voicemail = { left: null, problem: 'the agent refused to speak the voicemail' };
      this.logger.warn('the agent refused to speak the voicemail: hanging up');
      this.end('machine');
      return;
    }
    this.#voicemail = { left: 'agent', problem };
    await this.#downlink.lastWordsHeard(VOICEMAIL_CAP_MS);
    this.end('voicemail_left');
  }

  async #voicemailRecording(url: string): Promise<{ audio: Buffer } | { problem: string }> {
    const source = this.#deps.voicemailRecordings;
    if (!source) return { problem: 'this server plays no voicemail recordings' };
    return source(url, this.info.mediaFormat);
  }

  /** The text as a rendered prompt, or null when prompts are not rendered (or the render failed). */
  async #renderedVoicemail(text: string): Promise<Buffer | null> {
    try {
      return (await this.#deps.prompts?.('voicemail', this.info.mediaFormat, { text })) ?? null;
    } catch (err) {
      this.logger.warn(
        { err: (err as Error).message },
        'could not render the voicemail: the agent speaks it',
      );
      return null;
    }
  }

  /** Plays the message itself (the agent has nothing more to say here), and hangs up once it was heard. */
  async #playMessage(audio: Buffer, left: 'recording' | 'rendered', problem: string | null): Promise<void> {
    if (this.isEnding) return;
    this.#voicemail = { left, problem };
    // Closed now, the agent cannot talk over the message.
    this.#link.close();
    this.#downlink.play(audio);
    const heard = await this.#downlink.untilHeard(
      Math.min(this.#downlink.pendingMs() + FALLBACK_SLACK_MS, VOICEMAIL_CAP_MS),
    );
    if (heard === 'timeout') this.logger.warn('the carrier never confirmed the voicemail was played');
    this.end('voicemail_left');
  }

  #verdictTimedOut(): void {
    this.#gateTimer = null;
    if (!this.#gate || this.isEnding) return;
    if (this.#gate.awaitingMessageEnd) {
      this.onMachineVerdict({ verdict: 'machine', messageEnded: true, detectionMs: null, raw: 'timeout' });
      return;
    }
    const decision = this.#gate.timedOut();
    if (decision.kind === 'none') return;
    this.#deps.metrics.amdVerdicts.inc({ carrier: this.info.carrier, verdict: 'unknown' });
    this.logger.info('no answering-machine verdict in time: treated as a person');
  }

  #stopGateTimer(): void {
    if (this.#gateTimer !== null) this.#clock.clearTimeout(this.#gateTimer);
    this.#gateTimer = null;
  }

  /** Whether the agent's output passes now; otherwise the gate holds it, or drops it. */
  #gated(step: () => void, bytes = 0, startsReply = false): boolean {
    const gate = this.#gate;
    if (!gate || !gate.holds) return false;
    if (gate.state === 'listening') {
      gate.hold(step, bytes);
      return true;
    }
    // Leaving a message: what the agent was saying is dropped until the reply that speaks it starts.
    if (startsReply && gate.messageStarted()) return false;
    return true;
  }

  #can(next: CallState): boolean {
    const allowed: readonly string[] = CALL_TRANSITIONS[this.#state];
    return allowed.includes(next);
  }

  #move(next: CallState): void {
    if (!this.#can(next)) throw new Error(`call cannot move from ${this.#state} to ${next}`);
    this.#state = next;
  }

  /** Enters `finishing` for `reason`; false when a polite end is under way or the call is ending. */
  #startFinishing(reason: EndReason): boolean {
    if (!this.#can('finishing')) return false;
    this.#move('finishing');
    this.#finishingReason = reason;
    return true;
  }

  #agentReady(): void {
    // A redialed session's Settings carried the updates the dropped one never acknowledged.
    this.#updater.settingsApplied();
    const connectMs = this.#link.connectMs;
    if (connectMs !== null) this.#log.agentConnected(connectMs);
    if (this.#state === 'connecting' || this.#state === 'reconnecting') this.#move('live');
  }

  #agentAudio(chunk: Buffer): void {
    const send = () => {
      if (this.#downlink.audio(chunk) > 0) this.#audioSent();
    };
    if (!this.#gated(send, chunk.length)) send();
  }

  #agentMessage(message: AgentServerMessage): void {
    // `SpeakUpdated`, `ThinkUpdated`, `ListenUpdated`: a function's update took effect.
    if (this.#updater.onMessage(message)) return;
    switch (message.type) {
      case 'UserStartedSpeaking':
        this.#bargeIn();
        break;
      case 'AgentStartedSpeaking': {
        const started = () => {
          this.#downlink.replyStarted();
          this.#observeAgentLatency(message);
        };
        if (!this.#gated(started, 0, true)) started();
        break;
      }
      case 'AgentAudioDone': {
        const done = () => this.#downlink.replyDone();
        if (!this.#gated(done)) done();
        break;
      }
      case 'ConversationText': {
        const text = () => this.#conversationText(message.role, String(message.content ?? ''));
        // The agent's words wait with its audio; once a message is being left, its text is the record's.
        if (message.role !== 'assistant' || this.#gate?.state !== 'listening') text();
        else this.#gated(text);
        break;
      }
      case 'LatencyReport':
        // The metric is observed by the agent session; the call keeps the figures in its record.
        this.#log.agentTurnLatency(readLatencyReport(message as unknown as Record<string, unknown>));
        break;
      case 'InjectionRefused':
        this.logger.info(
          { reason: String(message.message ?? '').slice(0, 200) },
          'agent refused an injected message',
        );
        this.#injectionRefused?.();
        break;
      case 'FunctionCallRequest':
        for (const entry of Array.isArray(message.functions) ? message.functions : []) {
          if (entry?.client_side) void this.#answerFunction(entry);
        }
        break;
      case 'Error':
        // The link has closed the session; what happens next is decided when it is gone.
        this.logger.warn(
          { agentError: { code: message.code, description: message.description } },
          'agent error',
        );
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

  #agentLost(info: LinkLostInfo): void {
    if (this.isEnding) return;
    if (this.#state === 'finishing') {
      // The goodbye was under way; nothing more will be said.
      this.end(this.#finishingReason ?? 'agent_closed');
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
    if (this.#state !== 'reconnecting') this.#move('reconnecting');
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
    if (!this.#startFinishing(why)) return;
    const { fallback } = this.info.profile;
    if (fallback.transferTo && this.#leg.canTransfer) {
      try {
        await this.#leg.transfer(fallback.transferTo);
        this.end('transferred');
        return;
      } catch (transferErr) {
        this.logger.error({ err: (transferErr as Error).message }, 'fallback transfer failed');
      }
    }
    if (this.#deps.fallbackAudio) await this.#playAudio(this.#deps.fallbackAudio);
    else await this.#playPrompt('unavailable');
    this.end(why);
  }

  /** Plays a fixed prompt (rendered, else bundled) and waits until it has been heard, bounded. */
  async #playPrompt(kind: 'unavailable' | 'drain_goodbye'): Promise<void> {
    let audio: Buffer | null = null;
    try {
      audio = (await this.#deps.prompts?.(kind, this.info.mediaFormat)) ?? null;
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, prompt: kind }, 'no audio for a prompt');
    }
    if (audio) await this.#playAudio(audio);
  }

  async #playAudio(audio: Buffer): Promise<void> {
    if (this.isEnding) return;
    this.#downlink.play(audio);
    await this.#downlink.untilHeard(this.#downlink.pendingMs() + FALLBACK_SLACK_MS);
  }

  /**
   * Asks the agent to say `farewell` (docs/protocols/agent.md section 10: `queue`, so it neither
   * cuts its own reply short nor is refused while the caller speaks). An agent may still decline
   * it with `InjectionRefused`, which ends the wait at once.
   */
  async #sayFarewell(farewell: string): Promise<'started' | 'refused' | 'timeout'> {
    const refused = new Promise<'refused'>((resolve) => {
      this.#injectionRefused = () => resolve('refused');
    });
    this.#inject(farewell, 'queue');
    const said = await Promise.race([
      this.#downlink
        .waitForReply('started', REPLY_START_GRACE_MS * 2)
        .then((started): 'started' | 'timeout' => (started ? 'started' : 'timeout')),
      refused,
    ]);
    this.#injectionRefused = null;
    return said;
  }

  #inject(message: string, behavior: InjectBehavior): void {
    this.#link.send({ type: 'InjectAgentMessage', message, behavior });
  }

  #conversationText(role: string, content: string): void {
    if (role !== 'user' && role !== 'assistant') return;
    if (role === 'assistant') this.#downlink.replyText(content);
    this.#log.turn(role, content);
    this.#deps.events.publish(this.info.callSid, { type: 'transcript', role, content });
    // The text itself only under `transcript`, which the logger keeps only when LOG_TRANSCRIPTS=on.
    this.logger.info(
      { turn: { role, chars: content.length }, transcript: { role, content } },
      'conversation',
    );
  }

  #digits(digits: string): void {
    this.#deps.metrics.dtmfEntries.inc();
    this.#deps.events.publish(this.info.callSid, { type: 'dtmf', digits });
    // The digits only under `dtmf`, kept by the logger only when LOG_TRANSCRIPTS=on.
    this.logger.info({ keys: digits.length, dtmf: digits }, 'caller entered digits');
    this.#link.send({ type: 'InjectUserMessage', content: dtmfMessage(digits) });
  }

  async #answerFunction(entry: FunctionCallEntry): Promise<void> {
    const { profile } = this.info;
    const askedAtMs = this.#log.elapsedMs();
    const result = await runFunction(entry, {
      callSid: this.info.callSid,
      from: this.info.from,
      to: this.info.to,
      profileName: this.info.profileName,
      profile,
      canTransfer: this.#leg.canTransfer,
      endCall: () => void this.#endAfterReply(),
      transfer: (target) => void this.#transferAfterReply(target),
    });
    const { metrics } = this.#deps;
    // Updates go first, each awaited (bounded), so the reply that follows has the new voice.
    for (const update of result.updates ?? []) {
      const outcome = await this.#updater.request(update);
      metrics.agentUpdates.inc({ type: update.type, outcome });
      this.logger.info({ update: update.type, outcome, function: entry.name }, 'agent updated by a function');
    }
    const label = functionLabel(entry.name, profile);
    metrics.functionCalls.inc({ function: label, outcome: result.outcome });
    metrics.functionDuration.observe({ function: label, outcome: result.outcome }, result.durationMs / 1000);
    this.#log.functionCall({
      name: String(entry.name),
      arguments: String(entry.arguments ?? ''),
      outcome: result.outcome,
      durationMs: result.durationMs,
      atMs: askedAtMs,
      response: result.content,
      ...(typeof entry.id === 'string' ? { id: entry.id } : {}),
      ...(typeof entry.thought_signature === 'string' ? { thoughtSignature: entry.thought_signature } : {}),
    });
    this.#deps.events.publish(this.info.callSid, {
      type: 'function',
      name: entry.name,
      outcome: result.outcome,
    });
    this.#link.send({
      type: 'FunctionCallResponse',
      id: entry.id,
      name: entry.name,
      content: result.content,
    });
  }

  /** end_call: the goodbye may still be coming or playing; hang up only once it has been heard. */
  async #endAfterReply(): Promise<void> {
    if (!this.#startFinishing('end_call')) return;
    await this.#lastReplyHeard();
    this.end('end_call');
  }

  async #transferAfterReply(target: string): Promise<void> {
    if (!this.#startFinishing('transferred')) return;
    await this.#lastReplyHeard();
    if (this.isEnding) return;
    await this.#transfer(target).catch(() => {});
  }

  /** Moves the call to `target`; a failed transfer hands the call back to the agent and rethrows. */
  async #transfer(target: string): Promise<void> {
    try {
      await this.#leg.transfer(target);
      this.logger.info({ target }, 'call transferred');
      this.end('transferred');
    } catch (err) {
      this.logger.error({ err: (err as Error).message, target }, 'transfer failed');
      if (this.isEnding) throw err;
      this.#finishingReason = null;
      this.#move('live');
      this.#inject(TRANSFER_FAILED, 'queue');
      throw err;
    }
  }

  /** After a function answer: the reply it asked for starts, is sent, and is heard (each bounded). */
  async #lastReplyHeard(): Promise<void> {
    if (this.#downlink.state !== 'replying') {
      await this.#downlink.waitForReply('started', REPLY_START_GRACE_MS);
    }
    await this.#downlink.lastWordsHeard(FAREWELL_CAP_MS);
  }

  #bargeIn(): void {
    // docs/protocols/agent.md: the carrier drops what it holds, and no more of the interrupted
    // reply is forwarded until the agent starts a new one.
    if (!this.#downlink.bargeIn()) return;
    this.#log.bargeIn();
    this.#deps.metrics.bargeIns.inc();
    this.#deps.events.publish(this.info.callSid, { type: 'barge-in' });
  }

  /** Latency figures taken when agent audio starts reaching the caller. */
  #audioSent(): void {
    const { metrics } = this.#deps;
    if (this.#humanWaitPending && this.#gate?.state === 'open') {
      this.#humanWaitPending = false;
      metrics.amdHumanWait.observe(
        { carrier: this.info.carrier },
        (this.#clock.now() - this.#answeredAtMs) / 1000,
      );
    }
    const firstAudioMs = this.#log.firstAudio();
    if (firstAudioMs !== null) {
      metrics.firstAudio.observe({ prewarmed: String(this.#link.prewarmed) }, firstAudioMs / 1000);
    }
    const now = this.#clock.now();
    if (this.#agentFirstAudioPending) {
      const appliedAtMs = this.#link.settingsAppliedAtMs;
      if (appliedAtMs !== null) {
        this.#agentFirstAudioPending = false;
        metrics.agentFirstAudio.observe((now - appliedAtMs) / 1000);
      }
    }
    if (this.#callerSpeechEndedAt !== null) {
      const waitedMs = now - this.#callerSpeechEndedAt;
      this.#callerSpeechEndedAt = null;
      this.#log.perceived(waitedMs);
      metrics.perceivedLatency.observe(waitedMs / 1000);
    }
  }

  #observeAgentLatency(message: Extract<AgentServerMessage, { type: 'AgentStartedSpeaking' }>): void {
    const { agentReportedLatency } = this.#deps.metrics;
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
      this.#log.agentReported(message.total_latency * 1000);
    }
  }
}
