// What is kept of a call once it ends: written to the store, served by the admin API.
import type { CallAnalysis } from './call-analysis.js';

export interface TurnRecord {
  role: 'user' | 'assistant';
  /** For the assistant: what the caller heard (the whole reply unless interrupted). */
  content: string;
  /** Assistant turns: the reply as generated, when the caller heard only part of it. */
  generated?: string;
  interrupted: boolean;
  /** Assistant turns: milliseconds of the reply sent and confirmed played. */
  sentMs?: number;
  heardMs?: number;
  atMs: number;
  /**
   * `consent`: the recording consent prompt the bridge played before the agent spoke (an assistant
   * turn of its own, so every reply's heard length is its own).
   */
  kind?: 'consent';
  /** Caller turns: when the caller started saying it (the agent's UserStartedSpeaking), since the call started. */
  spokeFromMs?: number;
}

export interface FunctionCallRecord {
  name: string;
  arguments: string;
  outcome: string;
  durationMs: number;
  atMs: number;
  /** The request's id, so a redialed agent's History names the call it made. */
  id?: string;
  /** What the agent was answered (bounded), handed back in History on a redial. */
  response?: string;
  /** The request's `thought_signature`, passed back unchanged in History. */
  thoughtSignature?: string;
}

/** The agent's own breakdown of one turn's delay (`LatencyReport`), in milliseconds. */
export interface AgentTurnLatency {
  /** When the report arrived, since the call started. */
  atMs: number;
  sttMs?: number;
  /** To the language model's first token. */
  thinkingMs?: number;
  /** To the language model's whole text. */
  thinkingTextMs?: number;
  ttsMs?: number;
  totalMs?: number;
}

export interface CallRecord {
  callSid: string;
  streamSid: string;
  carrier: string;
  direction: 'inbound' | 'outbound';
  from: string;
  to: string;
  profile: string;
  /** ISO 8601. */
  startedAt: string;
  endedAt: string;
  durationMs: number;
  endReason: string;
  /** `completed` for calls that ended normally, `failed` for those the service could not carry. */
  outcome: 'completed' | 'failed';
  bargeIns: number;
  turns: TurnRecord[];
  functionCalls: FunctionCallRecord[];
  latency: {
    /** Stream `start` to the first agent audio sent to the caller. */
    firstAudioMs: number | null;
    /** Dialing the agent to `SettingsApplied`. */
    agentConnectMs: number | null;
    /** The agent's own reported `total_latency`, per reply, in milliseconds. */
    agentReportedMs: number[];
    /** End of caller speech to the first agent audio frame sent, per reply. */
    perceivedMs: number[];
    /** The agent's per-turn `LatencyReport`s, when it sends them (absent in older records). */
    agentTurns?: AgentTurnLatency[];
  };
  prewarmed: boolean;
  /** Post-call analysis (ANALYSIS=on): added once it has an outcome; absent until then or when off. */
  analysis?: CallAnalysis;
  /** Outbound calls: what placed the call (a campaign's attempt, or none), and who answered. */
  outbound?: OutboundRecord;
  /** Outbound calls that were never answered: the carrier's final status and why. */
  carrierStatus?: { status: string; reason: string };
  /** The instance (`INSTANCE_ID`) that carried the call, and its region. */
  instance?: string;
  region?: string;
  /** Recorded calls (docs/recordings.md): the recording as stored. */
  recording?: CallRecordingRecord;
}

export interface CallRecordingRecord {
  /** `ready`: stored whole; `failed`: given up (the part written may remain); `deleted`: removed on request. */
  state: 'ready' | 'failed' | 'deleted';
  durationMs: number;
  /** The file's size, header included. */
  bytes: number;
  /** Paused stretches, written as silence; `atMs` since the stream started. */
  pauses: Array<{ atMs: number; durationMs: number }>;
}

export interface OutboundRecord {
  campaign: string | null;
  /** The contact's position in the campaign. */
  contact: number | null;
  attempt: string | null;
  /** As answering-machine detection judged; null without detection. */
  answeredBy: 'human' | 'machine' | 'unknown' | null;
  /** The carrier's own verdict (`machine_end_beep`, `not_sure`, `timeout`, …). */
  amdVerdict: string | null;
  /** A machine answered and a voicemail was asked for: how it was left, or why it was not. */
  voicemail?: VoicemailRecord;
}

export interface VoicemailRecord {
  /** `recording`: the audio URL's file; `rendered`: the text as a rendered prompt; `agent`: spoken; null: none. */
  left: 'recording' | 'rendered' | 'agent' | null;
  /** Why the recording, or any message, could not be played (the call fell back, or hung up). */
  problem: string | null;
}

export interface CallRecordQuery {
  /** ISO 8601 bounds on `startedAt`, inclusive `since`, exclusive `until`. */
  since?: string;
  until?: string;
  outcome?: 'completed' | 'failed';
  endReason?: string;
  direction?: 'inbound' | 'outbound';
  carrier?: string;
  profile?: string;
  /** The campaign id of an outbound call a campaign placed. */
  campaign?: string;
  /** E.164: matches calls from or to it. */
  number?: string;
  limit: number;
  /** Opaque cursor from the previous page. */
  cursor?: string;
}

export interface CallRecordPage {
  calls: CallRecord[];
  nextCursor: string | null;
}
