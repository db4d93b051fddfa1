// What is kept of one call while it runs: the turns, the function calls, the barge-ins and the
// latency figures; from them the conversation so far for a redial and, at the end, the record.
// Assistant turns are cut to what the caller heard, from the downlink's marks (heard-audio.ts).
import { buildHistory, MAX_HISTORY_RESPONSE_CHARS } from '../../agent/history.js';
import type { LatencyObservation, TurnLatencyKind } from '../../agent/latency-report.js';
import type { HistoryMessage } from '../../agent/protocol.js';
import type { Clock } from '../clock.js';
import { END_REASONS, type EndReason } from './end-reason.js';
import type { HeardReply } from '../downlink/heard-audio.js';
export type { EndReason } from './end-reason.js';
import type { CallIdentity } from '../../api/calls.js';
import type {
  AgentTurnLatency,
  CallRecord,
  FunctionCallRecord,
  TurnRecord,
} from '../../store/call-record.js';

/** The call's identity as the record states it (src/api/calls.ts), with its stream and profile. */
export type CallLogInfo = CallIdentity & { streamSid: string; profileName: string };

/** Per-turn latency reports kept in a record; a long call's later turns add little. */
const MAX_LATENCY_REPORTS = 200;

const TURN_LATENCY_FIELDS = Object.freeze({
  stt: 'sttMs',
  thinking: 'thinkingMs',
  thinking_text: 'thinkingTextMs',
  tts: 'ttsMs',
  total: 'totalMs',
} as const satisfies Record<TurnLatencyKind, Exclude<keyof AgentTurnLatency, 'atMs'>>);

export class CallLog {
  readonly startedAt: Date;
  readonly #startedMs: number;
  readonly #clock: Clock;
  readonly #info: CallLogInfo;
  readonly #turns: TurnRecord[] = [];
  /** Index in `turns` of each assistant reply, in the order the downlink numbers replies. */
  readonly #replyTurns: number[] = [];
  /** When the caller began the turn the agent has not transcribed yet; null between turns. */
  #userSpeakingFromMs: number | null = null;
  readonly #functionCalls: FunctionCallRecord[] = [];
  #bargeIns = 0;
  #firstAudioMs: number | null = null;
  #agentConnectMs: number | null = null;
  readonly #agentReportedMs: number[] = [];
  readonly #perceivedMs: number[] = [];
  readonly #agentTurns: AgentTurnLatency[] = [];

  constructor(info: CallLogInfo, clock: Clock) {
    this.#info = info;
    this.#clock = clock;
    this.startedAt = new Date();
    this.#startedMs = clock.now();
  }

  /** Milliseconds since the call started. */
  elapsedMs(): number {
    return Math.round(this.#clock.now() - this.#startedMs);
  }

  get firstAudioMs(): number | null {
    return this.#firstAudioMs;
  }

  /**
   * A turn of the transcript. Assistant turns pair, in order, with the downlink's replies (what was
   * sent and heard of each): audio the bridge plays as a reply of its own (the consent prompt) is
   * logged as a turn too, with its `kind`, so the pairs never shift.
   */
  turn(role: 'user' | 'assistant', content: string, kind?: 'consent'): void {
    if (role === 'assistant') this.#replyTurns.push(this.#turns.length);
    const spokeFromMs = role === 'user' ? this.#userSpeakingFromMs : null;
    if (role === 'user') this.#userSpeakingFromMs = null;
    this.#turns.push({
      role,
      content,
      interrupted: false,
      atMs: this.elapsedMs(),
      ...(kind ? { kind } : {}),
      ...(spokeFromMs !== null ? { spokeFromMs } : {}),
    });
  }

  /** The caller started speaking (the agent heard it): the next caller turn spans from here. */
  userSpeaking(): void {
    this.#userSpeakingFromMs ??= this.elapsedMs();
  }

  /**
   * A function call answered; `atMs` is when it was asked for (default: now). Its id, answer and
   * `thought_signature` are kept so a redialed agent's History names what already ran.
   */
  functionCall(call: Omit<FunctionCallRecord, 'atMs'> & { atMs?: number }): void {
    const record: FunctionCallRecord = {
      name: call.name.slice(0, 128),
      arguments: call.arguments.slice(0, 4096),
      outcome: call.outcome,
      durationMs: call.durationMs,
      atMs: call.atMs ?? this.elapsedMs(),
    };
    if (call.id !== undefined) record.id = call.id.slice(0, 128);
    if (call.response !== undefined) record.response = call.response.slice(0, MAX_HISTORY_RESPONSE_CHARS);
    if (call.thoughtSignature !== undefined) record.thoughtSignature = call.thoughtSignature.slice(0, 8192);
    this.#functionCalls.push(record);
  }

  bargeIn(): void {
    this.#bargeIns++;
  }

  /** The first agent audio sent to the caller; returns its time since start, or null if not the first. */
  firstAudio(): number | null {
    if (this.#firstAudioMs !== null) return null;
    this.#firstAudioMs = this.elapsedMs();
    return this.#firstAudioMs;
  }

  agentConnected(connectMs: number): void {
    this.#agentConnectMs ??= connectMs;
  }

  agentReported(totalMs: number): void {
    this.#agentReportedMs.push(Math.round(totalMs));
  }

  perceived(waitedMs: number): void {
    this.#perceivedMs.push(Math.round(waitedMs));
  }

  /** The agent's `LatencyReport` for one turn, as read by agent/latency-report.ts. */
  agentTurnLatency(observations: readonly LatencyObservation[]): void {
    if (observations.length === 0 || this.#agentTurns.length >= MAX_LATENCY_REPORTS) return;
    const turn: AgentTurnLatency = { atMs: this.elapsedMs() };
    for (const { kind, seconds } of observations)
      turn[TURN_LATENCY_FIELDS[kind]] = Math.round(seconds * 1000);
    this.#agentTurns.push(turn);
  }

  /**
   * The conversation so far as the caller heard it, with the function calls already answered, for
   * a resumed agent session (docs/protocols/agent.md section 8).
   */
  history(replies: HeardReply[]): HistoryMessage[] {
    return buildHistory(this.#heardTurns(replies), this.#functionCalls);
  }

  record(reason: EndReason, replies: HeardReply[], prewarmed: boolean): CallRecord {
    const durationMs = this.elapsedMs();
    const info = this.#info;
    return {
      callSid: info.callSid,
      streamSid: info.streamSid,
      carrier: info.carrier,
      direction: info.direction,
      from: info.from,
      to: info.to,
      profile: info.profileName,
      startedAt: this.startedAt.toISOString(),
      endedAt: new Date(this.startedAt.getTime() + durationMs).toISOString(),
      durationMs,
      endReason: reason,
      outcome: END_REASONS[reason].failed ? 'failed' : 'completed',
      bargeIns: this.#bargeIns,
      turns: this.#heardTurns(replies),
      functionCalls: [...this.#functionCalls],
      latency: {
        firstAudioMs: this.#firstAudioMs,
        agentConnectMs: this.#agentConnectMs,
        agentReportedMs: [...this.#agentReportedMs],
        perceivedMs: [...this.#perceivedMs],
        agentTurns: this.#agentTurns.map((turn) => ({ ...turn })),
      },
      prewarmed,
    };
  }

  /** Turns with each assistant reply cut to what was heard. */
  #heardTurns(replies: HeardReply[]): TurnRecord[] {
    const turns = this.#turns.map((turn) => ({ ...turn }));
    replies.forEach((reply, i) => {
      const index = this.#replyTurns[i];
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
}
