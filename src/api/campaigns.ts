// Campaigns on the wire: the campaign JSON of `POST /v1/campaigns` (unknown fields refused), a
// campaign as the API shows it with its progress, its contacts, and the words of each vocabulary.
import { type Static, Type } from '@sinclair/typebox';
import { ANSWERED_BY } from './calls.js';
import { Cursor, Iso, Limit, Nullable, OneOf, PAGE_LIMITS, Query, Str } from './common.js';

export {
  AMD_MODES,
  ATTEMPT_OUTCOMES,
  type AttemptOutcome,
  CAMPAIGN_STATES,
  type CampaignState,
  CONTACT_STATES,
  type ContactState,
  FINAL_OUTCOMES,
  type FinalOutcome,
  RETRY_ON,
  type RetryOn,
  WEEKDAYS,
  type Weekday,
} from './vocabulary.js';
import {
  AMD_MODES,
  ATTEMPT_OUTCOMES,
  CAMPAIGN_STATES,
  CONTACT_STATES,
  FINAL_OUTCOMES,
  RETRY_ON,
  WEEKDAYS,
} from './vocabulary.js';

export const CAMPAIGN_LIMITS = {
  maxNameChars: 100,
  maxFromNumbers: 100,
  maxWindows: 28,
  minCallsPerSecond: 0.01,
  maxCallsPerSecond: 100,
  maxConcurrent: 1_000,
  maxAttempts: 10,
  maxDelaySeconds: 30 * 24 * 3_600,
  maxVoicemailChars: 2_000,
  minBreakerWindowSeconds: 10,
  maxBreakerWindowSeconds: 3_600,
} as const;

/** Characters a voicemail's audio URL may hold: the call context it is kept in is bounded. */
export const MAX_VOICEMAIL_AUDIO_URL_CHARS = 1_000;

const L = CAMPAIGN_LIMITS;
const oneOf = <T extends string>(values: readonly T[]) =>
  OneOf(values, { errorMessage: `must be one of ${values.join(', ')}` });
const Text = (max: number) => Type.String({ minLength: 1, maxLength: max });
const closed = { additionalProperties: false } as const;

const WindowInput = Type.Object(
  {
    days: Type.Array(oneOf(WEEKDAYS), { minItems: 1, maxItems: 7, uniqueItems: true }),
    start: Type.String({ maxLength: 5 }),
    end: Type.String({ maxLength: 5 }),
  },
  closed,
);

/** The campaign JSON; the rules that span fields or need the configuration are the server's. */
export const CampaignInput = Type.Object(
  {
    name: Text(L.maxNameChars),
    profile: Type.Optional(Text(64)),
    carrier: Type.Optional(Text(32)),
    from: Type.Optional(Type.Array(Text(40), { maxItems: L.maxFromNumbers })),
    schedule: Type.Optional(
      Type.Object(
        {
          timezone: Type.Optional(Text(64)),
          windows: Type.Optional(Type.Array(WindowInput, { maxItems: L.maxWindows })),
        },
        closed,
      ),
    ),
    pacing: Type.Optional(
      Type.Object(
        {
          callsPerSecond: Type.Optional(
            Type.Number({
              minimum: L.minCallsPerSecond,
              maximum: L.maxCallsPerSecond,
              errorMessage: `must be a number from ${L.minCallsPerSecond} to ${L.maxCallsPerSecond}`,
            }),
          ),
          maxConcurrent: Type.Optional(Type.Integer({ minimum: 1, maximum: L.maxConcurrent })),
        },
        closed,
      ),
    ),
    retry: Type.Optional(
      Type.Object(
        {
          maxAttempts: Type.Optional(Type.Integer({ minimum: 1, maximum: L.maxAttempts })),
          delaySeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: L.maxDelaySeconds })),
          on: Type.Optional(Type.Array(oneOf(RETRY_ON), { uniqueItems: true, maxItems: RETRY_ON.length })),
        },
        closed,
      ),
    ),
    amd: Type.Optional(
      Type.Object(
        {
          mode: Type.Optional(oneOf(AMD_MODES)),
          voicemail: Type.Optional(
            Type.Object(
              {
                text: Type.Optional(Text(L.maxVoicemailChars)),
                audioUrl: Type.Optional(Text(MAX_VOICEMAIL_AUDIO_URL_CHARS)),
              },
              closed,
            ),
          ),
        },
        closed,
      ),
    ),
    // Checked with the reader profiles and calls share (src/config/recording.ts).
    recording: Type.Optional(Type.Unknown({ description: 'recording settings (docs/recordings.md)' })),
    breaker: Type.Optional(
      Type.Object(
        {
          failureShare: Type.Optional(
            Type.Number({
              exclusiveMinimum: 0,
              maximum: 1,
              errorMessage: 'must be a number above 0 and at most 1',
            }),
          ),
          windowSeconds: Type.Optional(
            Type.Integer({ minimum: L.minBreakerWindowSeconds, maximum: L.maxBreakerWindowSeconds }),
          ),
          minCalls: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
        },
        closed,
      ),
    ),
  },
  { ...closed, 'x-subject': 'invalid campaign' },
);
export type CampaignInput = Static<typeof CampaignInput>;

export const CallingWindow = Type.Object({
  days: Type.Array(OneOf(WEEKDAYS)),
  start: Str('HH:MM, local to the contact'),
  end: Str('HH:MM after start; 24:00 is the end of the day'),
});
export type CallingWindow = Static<typeof CallingWindow>;

/** How a campaign dials, every default filled in: as stored, and as the API shows it. */
export const CampaignSettings = Type.Object({
  schedule: Type.Object({
    timezone: Str('IANA zone of contacts whose own zone is neither given nor derivable from the number'),
    windows: Type.Array(CallingWindow, { description: 'empty: calls may go at any hour' }),
  }),
  pacing: Type.Object({ callsPerSecond: Type.Number(), maxConcurrent: Type.Integer() }),
  retry: Type.Object({
    maxAttempts: Type.Integer(),
    delaySeconds: Type.Integer(),
    on: Type.Array(OneOf(RETRY_ON)),
  }),
  amd: Type.Object({
    mode: OneOf(AMD_MODES),
    voicemail: Nullable(
      Type.Object({ text: Type.Optional(Type.String()), audioUrl: Type.Optional(Type.String()) }),
    ),
  }),
  breaker: Type.Object({
    failureShare: Type.Number(),
    windowSeconds: Type.Integer(),
    minCalls: Type.Integer(),
  }),
});
export type CampaignSettings = Static<typeof CampaignSettings>;

const countsOf = <T extends string>(words: readonly T[]) =>
  Type.Object(
    Object.fromEntries(words.map((word) => [word, Type.Integer()])) as Record<
      T,
      ReturnType<typeof Type.Integer>
    >,
  );

export const CampaignProgress = Type.Object({
  contacts: Type.Composite([countsOf(CONTACT_STATES), Type.Object({ total: Type.Integer() })]),
  outcomes: countsOf(FINAL_OUTCOMES),
  inFlight: Type.Integer({ description: 'calls in flight' }),
  pace: Type.Object({
    set: Type.Number({ description: 'calls per second the campaign is set to' }),
    achieved: Type.Number({ description: 'calls begun per second over the last minute' }),
  }),
  etaSeconds: Nullable(
    Type.Number({ description: "until the campaign's calls are over; null unless running" }),
  ),
});
export type CampaignProgress = Static<typeof CampaignProgress>;

export const PAUSED_BY = ['operator', 'breaker'] as const;

export const Campaign = Type.Composite(
  [
    Type.Object({
      id: Str(),
      name: Str(),
      state: OneOf(CAMPAIGN_STATES),
      profile: Str(),
      carrier: Nullable(Str("null: the server's default carrier")),
      from: Type.Array(Type.String(), { description: "caller IDs, E.164; empty: the carrier's default" }),
    }),
    CampaignSettings,
    Type.Object({
      createdAt: Nullable(Iso('when created')),
      startedAt: Nullable(Iso('when first started')),
      endedAt: Nullable(Iso('when completed or cancelled')),
      pause: Nullable(
        Type.Object({ by: OneOf(PAUSED_BY), reason: Type.String(), at: Nullable(Iso('when paused')) }),
      ),
      progress: CampaignProgress,
    }),
  ],
  { $id: 'Campaign', description: 'a campaign with its progress' },
);
export type Campaign = Static<typeof Campaign>;

export const CampaignsQuery = Query({
  limit: Limit(PAGE_LIMITS.campaigns.max, PAGE_LIMITS.campaigns.fallback),
  cursor: Cursor,
});
export const CampaignPage = Type.Object({
  campaigns: Type.Array(Campaign),
  nextCursor: Nullable(Type.String()),
});

export const Attempt = Type.Object({
  id: Str(),
  number: Type.Integer({ description: '1 for the first attempt' }),
  from: Nullable(Type.String()),
  callSid: Nullable(Type.String()),
  startedAt: Nullable(Iso('when dialed')),
  endedAt: Nullable(Iso('when it ended')),
  outcome: Nullable(OneOf(ATTEMPT_OUTCOMES)),
  durationMs: Nullable(Type.Number()),
  answeredBy: Nullable(OneOf(ANSWERED_BY)),
  summary: Nullable(Type.String()),
  reason: Nullable(Type.String()),
});

export const Contact = Type.Object({
  id: Type.Integer({ description: "the contact's position in the campaign" }),
  row: Type.Integer({ description: 'its row in the upload' }),
  phone: Str(),
  country: Nullable(Type.String()),
  timezone: Type.String(),
  variables: Type.Record(Type.String(), Type.String()),
  state: OneOf(CONTACT_STATES),
  outcome: Nullable(OneOf(FINAL_OUTCOMES)),
  note: Nullable(Type.String()),
  nextAttemptAt: Nullable(Iso('when it is next dialed')),
  attempts: Type.Array(Attempt),
});
export type Contact = Static<typeof Contact>;

export const ContactsQuery = Query({
  state: Type.Optional(
    OneOf(CONTACT_STATES, { errorMessage: `must be one of ${CONTACT_STATES.join(', ')}` }),
  ),
  limit: Limit(PAGE_LIMITS.contacts.max, PAGE_LIMITS.contacts.fallback),
  cursor: Cursor,
});
export const ContactPage = Type.Object({
  contacts: Type.Array(Contact),
  nextCursor: Nullable(Type.String()),
});

export const RejectedRow = Type.Object({ row: Type.Integer(), reason: Str() });
/** The text/csv form of an upload: a header row, then one row per entry. */
export const CsvUpload = Type.String({ description: 'text/csv with a header row' });
/** The JSON form of a contacts upload; each element's fields are judged row by row. */
export const ContactsJson = Type.Array(
  Type.Unknown({ description: 'a contact: phone, country?, variables' }),
  {
    errorMessage: 'the body must be a JSON array of objects, or text/csv',
    'x-subject': 'contacts',
  },
);
export const ContactsAdded = Type.Object({ added: Type.Integer(), rejected: Type.Array(RejectedRow) });
export type ContactsAdded = Static<typeof ContactsAdded>;

/** One `progress` event of a campaign's stream: the campaign, and dials per second over 10 s. */
export const CampaignProgressEvent = Type.Composite([Campaign, Type.Object({ dialRate: Type.Number() })]);
export type CampaignProgressEvent = Static<typeof CampaignProgressEvent>;
