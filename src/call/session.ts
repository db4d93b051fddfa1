// One phone call: the carrier leg on one side, the voice agent on the other. It relays audio
// byte-exact both ways, turns `UserStartedSpeaking` into an immediate `clear`, and ends through
// one path that records why.
import type { Logger } from 'pino';
import type { AgentDialer } from '../agent/dialer.js';
import type { AgentServerMessage, FunctionCallEntry } from '../agent/protocol.js';
import type { AgentCloseInfo, AgentHandlers, AgentSession } from '../agent/session.js';
import { buildSettings } from '../agent/settings.js';
import { OutboundFramer } from '../audio/framer.js';
import type { CarrierLeg, MediaFormat } from '../carriers/carrier.js';
import type { AgentProfile } from '../config/types.js';
import { AgentConnectError } from '../errors.js';
import type { Metrics } from '../metrics/metrics.js';
import type { CallEventHub } from './events.js';
import { PlayoutClock } from './playout.js';

/** Call states and the moves each allows (STYLE.md: explicit states, guarded transitions). */
export const CALL_TRANSITIONS = Object.freeze({
  connecting: ['configuring', 'ending'],
  configuring: ['live', 'ending'],
  live: ['ending'],
  ending: ['ended'],
  ended: [],
} as const satisfies Record<string, readonly string[]>);

export type CallState = keyof typeof CALL_TRANSITIONS;

export type EndReason =
  | 'caller_hangup'
  | 'agent_closed'
  | 'agent_error'
  | 'agent_unreachable'
  | 'agent_refused'
  | 'shutdown';

/** Reasons that start on the phone side: the carrier leg is already gone, nothing to hang up. */
const CARRIER_ENDED: ReadonlySet<EndReason> = new Set(['caller_hangup']);

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
  /** Caller audio held while the agent is dialed and configured; past it the oldest is dropped. */
  maxEarlyAudioBytes: number;
  onEnded(session: CallSession): void;
}

export function bytesPerMs(format: MediaFormat): number {
  const bytesPerSample = format.encoding === 'linear16' ? 2 : 1;
  return (format.sampleRate * bytesPerSample * format.channels) / 1000;
}

export class CallSession implements AgentHandlers {
  state: CallState = 'connecting';
  endReason: EndReason | null = null;
  readonly startedAt = new Date();
  readonly logger: Logger;
  private agent: AgentSession | null = null;
  private earlyAudio: Buffer[] = [];
  private earlyBytes = 0;
  /** Set by `UserStartedSpeaking`: audio of the interrupted reply must not reach the caller. */
  private muted = false;
  private readonly framer: OutboundFramer;
  private readonly playout: PlayoutClock;
  private readonly upFrames;
  private readonly upBytes;
  private readonly downFrames;
  private readonly downBytes;
  bargeIns = 0;

  constructor(
    readonly info: CallInfo,
    private readonly leg: CarrierLeg,
    private readonly deps: CallDeps,
  ) {
    this.logger = deps.logger.child({ callSid: info.callSid, streamSid: info.streamSid });
    this.framer = new OutboundFramer(deps.frameBytes);
    this.playout = new PlayoutClock(bytesPerMs(info.mediaFormat));
    // Bound once: label lookups on every 20 ms frame add up at a thousand calls.
    this.upFrames = deps.metrics.audioFrames.labels('uplink');
    this.upBytes = deps.metrics.audioBytes.labels('uplink');
    this.downFrames = deps.metrics.audioFrames.labels('downlink');
    this.downBytes = deps.metrics.audioBytes.labels('downlink');
    deps.metrics.callsActive.inc({ carrier: info.carrier });
  }

  /** Dials the agent, or adopts one dialed ahead of the stream. */
  async start(prewarmed?: AgentSession): Promise<void> {
    let agent: AgentSession;
    try {
      agent =
        prewarmed ??
        (await this.deps.dial(
          buildSettings(this.info.profile, this.info, this.info.mediaFormat),
          this.logger,
        ));
    } catch (err) {
      const refused = err instanceof AgentConnectError && err.status === 429;
      this.logger.warn({ err: (err as Error).message }, 'agent connection failed');
      this.end(refused ? 'agent_refused' : 'agent_unreachable');
      return;
    }
    if (this.state !== 'connecting') {
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
    agent.attach(this);
  }

  // ── carrier side ──────────────────────────────────────────────────────────

  onCallerAudio(payload: Buffer): void {
    this.upFrames.inc();
    this.upBytes.inc(payload.length);
    if (this.agent) {
      this.agent.sendAudio(payload);
      return;
    }
    if (this.state !== 'connecting') return;
    this.earlyAudio.push(payload);
    this.earlyBytes += payload.length;
    while (this.earlyBytes > this.deps.maxEarlyAudioBytes && this.earlyAudio.length > 0) {
      this.earlyBytes -= this.earlyAudio.shift()!.length;
      this.deps.metrics.audioDropped.inc({ buffer: 'call_early' });
    }
  }

  onCallerDtmf(digit: string): void {
    this.logger.debug({ dtmf: digit }, 'caller pressed a key');
  }

  onMarkPlayed(name: string): void {
    this.logger.trace({ mark: name }, 'mark played');
  }

  // ── agent side ────────────────────────────────────────────────────────────

  onReady(): void {
    if (this.state === 'configuring') this.transition('live');
  }

  onAudio(chunk: Buffer): void {
    if (this.muted || this.state === 'ending' || this.state === 'ended') return;
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
        break;
      case 'AgentAudioDone': {
        const rest = this.framer.flush();
        if (rest && !this.muted) this.sendToCaller(rest);
        break;
      }
      case 'ConversationText':
        this.deps.events.publish(this.info.callSid, {
          type: 'transcript',
          role: message.role,
          content: message.content,
        });
        this.logger.info({ transcript: { role: message.role, content: message.content } }, 'conversation');
        break;
      case 'FunctionCallRequest':
        this.answerFunctions(message.functions);
        break;
      case 'Error':
        this.logger.warn(
          { agentError: { code: message.code, description: message.description } },
          'agent error',
        );
        this.end('agent_error');
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
    this.end(info.agentError ? 'agent_error' : 'agent_closed');
  }

  // ── ending ────────────────────────────────────────────────────────────────

  /** The one way a call ends. Idempotent: the first reason wins. */
  end(reason: EndReason): void {
    if (this.state === 'ending' || this.state === 'ended') return;
    this.transition('ending');
    this.endReason = reason;
    this.agent?.close();
    if (!CARRIER_ENDED.has(reason)) this.leg.hangup();
    const { metrics } = this.deps;
    const seconds = (Date.now() - this.startedAt.getTime()) / 1000;
    metrics.callsActive.dec({ carrier: this.info.carrier });
    metrics.callsTotal.inc({ carrier: this.info.carrier, direction: this.info.direction, reason });
    metrics.callDuration.observe({ carrier: this.info.carrier, direction: this.info.direction }, seconds);
    this.deps.events.publish(this.info.callSid, { type: 'end', reason });
    this.logger.info(
      { call: { profile: this.info.profileName, reason, durationS: seconds, bargeIns: this.bargeIns } },
      'call ended',
    );
    this.transition('ended');
    this.deps.onEnded(this);
  }

  private transition(next: CallState): void {
    const allowed: readonly string[] = CALL_TRANSITIONS[this.state];
    if (!allowed.includes(next)) throw new Error(`call cannot move from ${this.state} to ${next}`);
    this.state = next;
  }

  private sendToCaller(audio: Buffer): void {
    this.leg.sendAudio(audio);
    this.playout.queued(audio.length);
    this.downFrames.inc();
    this.downBytes.inc(audio.length);
  }

  private bargeIn(): void {
    // PROTOCOLS.md section 1 / CONTRACT: the carrier drops what it holds, and no more of the
    // interrupted reply is forwarded until the agent starts a new one.
    this.muted = true;
    this.framer.reset();
    this.leg.clear();
    if (this.playout.isPlaying()) {
      this.bargeIns++;
      this.deps.metrics.bargeIns.inc();
      this.deps.events.publish(this.info.callSid, { type: 'barge-in' });
    }
    this.playout.clear();
  }

  private answerFunctions(functions: FunctionCallEntry[]): void {
    for (const fn of functions ?? []) {
      if (!fn?.client_side) continue;
      this.agent?.send({
        type: 'FunctionCallResponse',
        id: fn.id,
        name: fn.name,
        content: JSON.stringify({ error: `function ${fn.name} is not available on this call` }),
      });
    }
  }
}
