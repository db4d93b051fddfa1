// Calls on the wire: a call's identity, a live call, an ended call's record, the listing's query
// string, and the controls (hang up, transfer, recording, place a call).
import { type Static, Type } from '@sinclair/typebox';
import { Cursor, Iso, Limit, Nullable, OneOf, PAGE_LIMITS, Query, ref, Str } from './common.js';

export const DIRECTIONS = ['inbound', 'outbound'] as const;
export const Direction = OneOf(DIRECTIONS);

/** Who called whom, over which carrier: the identity every view of a call starts from. */
export const CallIdentity = Type.Object({
  callSid: Str("the carrier's call id"),
  carrier: Str(),
  direction: Direction,
  from: Str(),
  to: Str(),
});
export type CallIdentity = Static<typeof CallIdentity>;

export const LiveCall = Type.Composite(
  [
    CallIdentity,
    Type.Object({
      startedAt: Iso('when the media stream started'),
      campaign: Nullable(Type.String()),
      instance: Str('the instance (INSTANCE_ID) carrying the call'),
      region: Str(),
    }),
  ],
  { $id: 'LiveCall' },
);
export type LiveCall = Static<typeof LiveCall>;

export const TurnRecord = Type.Object({
  role: OneOf(['user', 'assistant'] as const),
  /** For the assistant: what the caller heard (the whole reply unless interrupted). */
  content: Type.String(),
  generated: Type.Optional(Str('assistant turns: the reply as generated, when only part was heard')),
  interrupted: Type.Boolean(),
  sentMs: Type.Optional(Type.Number({ description: 'assistant turns: ms of the reply sent' })),
  heardMs: Type.Optional(Type.Number({ description: 'assistant turns: ms confirmed played' })),
  atMs: Type.Number({ description: 'since the call started' }),
  kind: Type.Optional(
    OneOf(['consent'] as const, {
      description:
        'consent: the recording consent prompt played before the agent spoke, a turn of its own so every reply has its own heard length',
    }),
  ),
  spokeFromMs: Type.Optional(
    Type.Number({ description: 'caller turns: when the caller started saying it, since the call started' }),
  ),
});
export type TurnRecord = Static<typeof TurnRecord>;

export const FunctionCallRecord = Type.Object({
  name: Type.String(),
  arguments: Type.String(),
  outcome: Type.String(),
  durationMs: Type.Number(),
  atMs: Type.Number(),
  id: Type.Optional(Str("the request's id, so a redialed agent's History names the call it made")),
  response: Type.Optional(Str('what the agent was answered (bounded)')),
  thoughtSignature: Type.Optional(Str("the request's thought_signature, passed back unchanged")),
});
export type FunctionCallRecord = Static<typeof FunctionCallRecord>;

/** The agent's own breakdown of one turn's delay (`LatencyReport`), in milliseconds. */
export const AgentTurnLatency = Type.Object({
  atMs: Type.Number({ description: 'when the report arrived, since the call started' }),
  sttMs: Type.Optional(Type.Number()),
  thinkingMs: Type.Optional(Type.Number({ description: "to the language model's first token" })),
  thinkingTextMs: Type.Optional(Type.Number({ description: "to the language model's whole text" })),
  ttsMs: Type.Optional(Type.Number()),
  totalMs: Type.Optional(Type.Number()),
});
export type AgentTurnLatency = Static<typeof AgentTurnLatency>;

export const CallAnalysis = Type.Object({
  outcome: OneOf(['ok', 'skipped', 'failed'] as const),
  reason: Type.Optional(Type.String()),
  summary: Type.Optional(Type.String()),
  sentiment: Type.Optional(Str('positive, neutral or negative')),
  sentimentScore: Type.Optional(Type.Number({ description: '-1 (negative) to 1 (positive)' })),
  topics: Type.Optional(Type.Array(Type.String())),
  intents: Type.Optional(Type.Array(Type.String())),
  language: Type.Optional(Type.String()),
  attempts: Type.Integer({ description: 'requests made, the successful one included' }),
  truncated: Type.Optional(Type.Boolean()),
  at: Iso('when the outcome was reached'),
});
export type CallAnalysis = Static<typeof CallAnalysis>;

export const CallRecordingRecord = Type.Object({
  state: OneOf(['ready', 'failed', 'deleted'] as const, {
    description: 'ready: stored whole; failed: given up; deleted: removed on request',
  }),
  durationMs: Type.Number(),
  bytes: Type.Integer({ description: "the file's size, header included" }),
  pauses: Type.Array(Type.Object({ atMs: Type.Number(), durationMs: Type.Number() }), {
    description: 'paused stretches, written as silence; atMs since the stream started',
  }),
});
export type CallRecordingRecord = Static<typeof CallRecordingRecord>;

export const VoicemailRecord = Type.Object({
  left: Nullable(OneOf(['recording', 'rendered', 'agent'] as const)),
  problem: Nullable(Str('why the recording, or any message, could not be played')),
});
export type VoicemailRecord = Static<typeof VoicemailRecord>;

export const ANSWERED_BY = ['human', 'machine', 'unknown'] as const;
export const OutboundRecord = Type.Object({
  campaign: Nullable(Type.String()),
  contact: Nullable(Type.Integer({ description: "the contact's position in the campaign" })),
  attempt: Nullable(Type.String()),
  answeredBy: Nullable(OneOf(ANSWERED_BY)),
  amdVerdict: Nullable(Str("the carrier's own verdict (machine_end_beep, not_sure, …)")),
  voicemail: Type.Optional(VoicemailRecord),
});
export type OutboundRecord = Static<typeof OutboundRecord>;

export const CALL_OUTCOMES = ['completed', 'failed'] as const;

export const CallRecord = Type.Composite(
  [
    CallIdentity,
    Type.Object({
      streamSid: Type.String(),
      profile: Type.String(),
      startedAt: Iso('start of the media stream'),
      endedAt: Iso('end of the call'),
      durationMs: Type.Number(),
      endReason: Type.String(),
      outcome: OneOf(CALL_OUTCOMES, { description: 'failed: the service could not carry the call' }),
      bargeIns: Type.Integer(),
      turns: Type.Array(TurnRecord),
      functionCalls: Type.Array(FunctionCallRecord),
      latency: Type.Object({
        firstAudioMs: Nullable(Type.Number({ description: 'stream start to the first agent audio' })),
        agentConnectMs: Nullable(Type.Number({ description: 'dialing the agent to SettingsApplied' })),
        agentReportedMs: Type.Array(Type.Number()),
        perceivedMs: Type.Array(Type.Number(), {
          description: 'end of caller speech to the first agent audio, per reply',
        }),
        agentTurns: Type.Optional(Type.Array(AgentTurnLatency)),
      }),
      prewarmed: Type.Boolean(),
      analysis: Type.Optional(CallAnalysis),
      outbound: Type.Optional(OutboundRecord),
      carrierStatus: Type.Optional(Type.Object({ status: Type.String(), reason: Type.String() })),
      instance: Type.Optional(Str('the instance that carried the call')),
      region: Type.Optional(Type.String()),
      recording: Type.Optional(CallRecordingRecord),
    }),
  ],
  { $id: 'CallRecord', description: 'an ended call' },
);
export type CallRecord = Static<typeof CallRecord>;

/** `GET /v1/calls`: the filters of the records, or `live=true` for the calls in progress. */
export const CallsQuery = Query({
  live: Type.Optional(
    OneOf(['true', 'false'] as const, {
      description: '`true`: calls in progress instead of records',
      errorMessage: 'must be true or false',
    }),
  ),
  since: Type.Optional(
    Type.String({
      description: 'startedAt at or after: an ISO 8601 date, or a date-time with a zone',
      pattern:
        '^\\d{4}-\\d{2}-\\d{2}(T([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2}))?$',
      errorMessage: 'must be an ISO 8601 date or date-time with a zone, like 2025-01-31T09:00:00Z',
    }),
  ),
  until: Type.Optional(
    Type.String({
      description: 'startedAt before: an ISO 8601 date, or a date-time with a zone',
      pattern:
        '^\\d{4}-\\d{2}-\\d{2}(T([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2}))?$',
      errorMessage: 'must be an ISO 8601 date or date-time with a zone, like 2025-01-31T09:00:00Z',
    }),
  ),
  outcome: Type.Optional(OneOf(CALL_OUTCOMES, { errorMessage: 'must be completed or failed' })),
  reason: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'the end reason',
      errorMessage: 'must be 1 to 200 characters',
    }),
  ),
  direction: Type.Optional(OneOf(DIRECTIONS, { errorMessage: 'must be inbound or outbound' })),
  carrier: Type.Optional(NameFilter()),
  profile: Type.Optional(NameFilter()),
  campaign: Type.Optional(NameFilter('campaign id')),
  number: Type.Optional(
    Type.String({
      pattern: '^\\+[1-9]\\d{1,14}$',
      description: 'E.164; matches from or to',
      errorMessage: 'must be an E.164 number, like +12125550100 (send + as %2B)',
    }),
  ),
  limit: Limit(PAGE_LIMITS.calls.max, PAGE_LIMITS.calls.fallback),
  cursor: Cursor,
});
export type CallsQuery = Static<typeof CallsQuery>;

/** A name filter (carrier, profile, campaign): plain characters, bounded. */
function NameFilter(description?: string) {
  return Type.String({
    pattern: '^[\\w.:-]{1,80}$',
    ...(description ? { description } : {}),
    errorMessage: 'must be 1 to 80 letters, digits or _.:-',
  });
}

/** A listing's entry is a record unless `live=true` asked for calls in progress. */
export const isCallRecord = (call: CallRecord | LiveCall): call is CallRecord => 'endedAt' in call;

export const CallPage = Type.Object({
  calls: Type.Array(Type.Union([ref(CallRecord), ref(LiveCall)])),
  nextCursor: Type.Optional(Nullable(Type.String())),
});

export const ControlAnswer = Type.Object({
  callSid: Str(),
  instance: Str('the instance that carried out the control'),
});
export const TransferAnswer = Type.Composite([ControlAnswer, Type.Object({ to: Str() })]);
export const TransferBody = Type.Object(
  {
    to: Type.String({
      pattern: '^(\\+[1-9]\\d{6,14}|sips?:[^\\s<>"]{3,250})$',
      description: 'E.164 number or sip: URI the dial policy allows',
      errorMessage: 'must be an E.164 number (+15550100) or a sip: URI',
    }),
  },
  {
    additionalProperties: false,
    errorMessage: 'must be {"to": an E.164 number (+15550100) or a sip: URI}',
    'x-sentences': true,
  },
);

export const RecordingControlAnswer = Type.Composite([
  ControlAnswer,
  Type.Object({ recording: OneOf(['paused', 'recording'] as const) }),
]);
export const WavAudio = Type.String({ description: 'audio/wav, whole or one byte range' });

/** Placing one call; the handler checks numbers, profile, carrier and placeholders against the config. */
export const PlaceCallBody = Type.Object(
  {
    to: Type.String({ description: 'E.164', errorMessage: 'must be a phone number in E.164' }),
    from: Type.Optional(
      Nullable(Type.String({ description: 'E.164', errorMessage: 'must be a phone number in E.164' })),
    ),
    profile: Type.Optional(Str('a profile of config/profiles')),
    carrier: Type.Optional(Str('a carrier that can place calls')),
    variables: Type.Optional(
      Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()]), {
        description: 'values of the profile placeholders ({{name}}), as text',
        errorMessage: 'must be an object of names to text',
      }),
    ),
    amd: Type.Optional(
      Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null(), Type.Literal(false)], {
        description:
          'answering-machine detection: {"mode": "voicemail"|"hangup"|"off", "voicemail": {"text", "audioUrl"}}',
        errorMessage:
          'must be {"mode": "voicemail"|"hangup"|"off", "voicemail": {"text": …, "audioUrl": "https://…"}} (one or both)',
      }),
    ),
    recording: Type.Optional(Type.Unknown({ description: 'recording settings (docs/recordings.md)' })),
  },
  {
    additionalProperties: false,
    errorMessage: 'must be a JSON object: {"to": "+1555…"}',
    // Refused as the handler's checks of the values are: one sentence naming the field.
    'x-sentences': true,
  },
);
export type PlaceCallBody = Static<typeof PlaceCallBody>;

export const PlacedCall = Type.Object({
  callSid: Str(),
  carrier: Str(),
  to: Str(),
  from: Nullable(Type.String()),
  profile: Str(),
  direction: Type.Literal('outbound'),
  status: Str(),
});
