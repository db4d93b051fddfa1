// The /v1 routes' schemas (TypeBox): they check params and bodies, and /openapi.json is generated
// from them (openapi.ts). Query strings are documented here and checked by their handlers
// (query-params.ts), which refuse a parameter given twice or unknown with a precise message.
import { type TSchema, Type } from '@sinclair/typebox';
import { CampaignInput } from '../outbound/campaign-spec.js';
import { ROLES } from '../store/access.js';

export const SESSION_COOKIE = 'callbridge_session';
/** Lower case: Node lower-cases incoming header names. */
export const CSRF_HEADER = 'x-callbridge-csrf';
/**
 * Marks a body schema its handler checks itself (with messages naming each field as the API always
 * has); the schema then documents the body without a second, differently worded check.
 */
export const CHECKED_BY_HANDLER = 'x-checked-by-handler';

export const handlerChecked = <T extends TSchema>(schema: T): T => ({
  ...schema,
  [CHECKED_BY_HANDLER]: true,
});

const Str = (description?: string) => Type.String(description ? { description } : {});
const Iso = (description: string) => Type.String({ format: 'date-time', description });

export const ErrorBody = Type.Object(
  {
    error: Type.Object({ code: Str('a stable CALLBRIDGE_… code'), message: Str() }),
  },
  { $id: 'Error', description: 'every error' },
);
/** The error answers every authenticated route may give (inline: no shared schema to resolve). */
export function errors(...statuses: number[]): Record<number, TSchema> {
  const { $id: _id, ...inline } = ErrorBody;
  const all = [400, 401, 403, ...statuses];
  return Object.fromEntries(all.map((status) => [status, inline as TSchema]));
}

export const Role = Type.Union(
  ROLES.map((role) => Type.Literal(role)),
  { description: 'viewer < operator < admin' },
);

export const CallSidParams = Type.Object({ callSid: Type.String({ minLength: 1 }) });
export const IdParams = Type.Object({ id: Type.String({ minLength: 1 }) });
export const NumberParams = Type.Object({
  number: Type.String({ description: 'E.164; `+` may be sent as %2B' }),
});
export const PageQuery = Type.Object({
  limit: Type.Optional(Type.String({ description: 'page size' })),
  cursor: Type.Optional(Type.String({ description: 'nextCursor of the previous page' })),
});

export const LiveCall = Type.Object(
  {
    callSid: Str(),
    carrier: Str(),
    direction: Type.Union([Type.Literal('inbound'), Type.Literal('outbound')]),
    from: Str(),
    to: Str(),
    startedAt: Iso('when the media stream started'),
    campaign: Type.Union([Type.String(), Type.Null()]),
    instance: Str('the instance carrying the call'),
    region: Str(),
  },
  { $id: 'LiveCall' },
);

export const CallRecord = Type.Object(
  {
    callSid: Str(),
    carrier: Str(),
    direction: Type.Union([Type.Literal('inbound'), Type.Literal('outbound')]),
    from: Str(),
    to: Str(),
    profile: Str(),
    startedAt: Iso('start of the media stream'),
    endedAt: Iso('end of the call'),
    durationMs: Type.Number(),
    endReason: Str(),
    outcome: Type.Union([Type.Literal('completed'), Type.Literal('failed')]),
    turns: Type.Array(Type.Object({}, { additionalProperties: true })),
    analysis: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { $id: 'CallRecord', additionalProperties: true, description: 'an ended call (src/store/call-record.ts)' },
);

export const CallsQuery = Type.Object({
  live: Type.Optional(Type.String({ description: '`true`: calls in progress instead of records' })),
  since: Type.Optional(Iso('startedAt at or after')),
  until: Type.Optional(Iso('startedAt before')),
  outcome: Type.Optional(Type.String({ description: 'completed | failed' })),
  reason: Type.Optional(Str('the end reason')),
  direction: Type.Optional(Type.String({ description: 'inbound | outbound' })),
  carrier: Type.Optional(Str()),
  profile: Type.Optional(Str()),
  campaign: Type.Optional(Str('campaign id')),
  number: Type.Optional(Str('E.164; matches from or to')),
  limit: Type.Optional(Str('1 to 200, default 50')),
  cursor: Type.Optional(Str()),
});

export const CallPage = Type.Object({
  calls: Type.Array(Type.Union([Type.Ref('CallRecord'), Type.Ref('LiveCall')])),
  nextCursor: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});

export const ControlAnswer = Type.Object({ callSid: Str(), instance: Str(), to: Type.Optional(Str()) });
export const TransferBody = handlerChecked(
  Type.Object({ to: Str('E.164 number or sip: URI the dial policy allows') }),
);

export const PlaceCallBody = handlerChecked(
  Type.Object({
    to: Str('E.164'),
    from: Type.Optional(Str('E.164')),
    profile: Type.Optional(Str()),
    carrier: Type.Optional(Str()),
    variables: Type.Optional(Type.Record(Type.String(), Type.String())),
    amd: Type.Optional(Type.Object({}, { additionalProperties: true })),
  }),
);
export const PlacedCall = Type.Object({
  callSid: Str(),
  carrier: Str(),
  to: Str(),
  from: Type.Union([Type.String(), Type.Null()]),
  profile: Str(),
  direction: Type.Literal('outbound'),
  status: Str(),
});

export const Campaign = Type.Object(
  {
    id: Str(),
    name: Str(),
    state: Type.Union(['draft', 'running', 'paused', 'completed', 'cancelled'].map((s) => Type.Literal(s))),
    progress: Type.Object({}, { additionalProperties: true }),
  },
  { $id: 'Campaign', additionalProperties: true },
);
export const CampaignBody = handlerChecked(CampaignInput);
export const CampaignPage = Type.Object({
  campaigns: Type.Array(Type.Ref('Campaign')),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
});
export const ContactsUpload = handlerChecked(
  Type.Union([Type.Array(Type.Object({}, { additionalProperties: true })), Type.String()], {
    description: 'text/csv with a header row, or a JSON array of contacts',
  }),
);
export const ContactsAdded = Type.Object({
  added: Type.Integer(),
  rejected: Type.Array(Type.Object({ row: Type.Integer(), reason: Str() })),
});
export const ContactsQuery = Type.Object({
  state: Type.Optional(Str()),
  limit: Type.Optional(Str()),
  cursor: Type.Optional(Str()),
});
export const ContactPage = Type.Object({
  contacts: Type.Array(Type.Object({}, { additionalProperties: true })),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
});
export const CsvText = Type.String({ description: 'text/csv' });

export const DncBody = handlerChecked(
  Type.Union([Type.Object({ numbers: Type.Array(Type.String()) }), Type.String()], {
    description: 'JSON {"numbers": [...]} or text/csv with a phone column',
  }),
);
export const DncAdded = Type.Object({
  added: Type.Integer(),
  alreadyListed: Type.Integer(),
  rejected: Type.Array(Type.Object({ row: Type.Integer(), reason: Str() })),
});
export const DncEntry = Type.Object({
  number: Str(),
  listed: Type.Literal(true),
  addedAt: Iso('when listed'),
});
export const DncQuery = Type.Object({
  q: Type.Optional(Str('part of the number')),
  limit: Type.Optional(Str()),
  cursor: Type.Optional(Str()),
});
export const DncPage = Type.Object({
  numbers: Type.Array(Type.Object({ number: Str(), addedAt: Iso('when listed') })),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
});

export const KeyBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 80 }), role: Role },
  { additionalProperties: false },
);
export const KeyView = Type.Object({
  id: Str(),
  name: Str(),
  role: Role,
  createdAt: Iso('when created'),
});
export const CreatedKey = Type.Object({
  id: Str(),
  name: Str(),
  role: Role,
  createdAt: Iso('when created'),
  key: Str('the key itself: shown this once, stored only as a digest'),
});
export const KeyList = Type.Object({ keys: Type.Array(KeyView) });

export const SessionBody = Type.Object(
  { key: Type.String({ minLength: 1, maxLength: 512 }) },
  { additionalProperties: false },
);
export const SessionView = Type.Object({
  name: Str(),
  role: Role,
  csrf: Str('send back as X-Callbridge-CSRF on every change made with the cookie'),
});

export const AuditPage = Type.Object({
  entries: Type.Array(
    Type.Object({
      id: Str(),
      at: Iso('when'),
      keyId: Type.Union([Type.String(), Type.Null()], {
        description: "the key's id; null for ADMIN_TOKEN (named admin-token) and the local CLI (cli)",
      }),
      keyName: Str(),
      role: Role,
      action: Str(),
      target: Str(),
      detail: Type.Optional(Type.Object({}, { additionalProperties: true })),
    }),
  ),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
});

export const WavAudio = Type.String({ description: 'audio/wav, whole or one byte range' });
export const RecordingControlAnswer = Type.Object({
  callSid: Str(),
  instance: Str(),
  recording: Type.Union([Type.Literal('paused'), Type.Literal('recording')]),
});
export const EventStream = Type.String({ description: 'text/event-stream' });
export const NoContent = Type.Null({ description: 'no content' });

export const DeadLetterQuery = Type.Object({ limit: Type.Optional(Str('1 to 1000, default 100')) });
export const DeadLetters = Type.Object({
  deadLetters: Type.Array(Type.Object({}, { additionalProperties: true })),
});
export const Requeued = Type.Object({ status: Type.Literal('requeued'), id: Str() });

/** Shared schemas referenced by `$ref`, added to the app once (openapi.ts). */
export const SHARED_SCHEMAS: readonly TSchema[] = [LiveCall, CallRecord, Campaign];
