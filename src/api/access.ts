// Who may use the admin API and what they did: API keys, the console's session, the audit log.
import { type Static, Type } from '@sinclair/typebox';
import { Cursor, Iso, Limit, NextCursor, PAGE_LIMITS, Query, Role, Str } from './common.js';

export const KeyBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 80 }), role: Role },
  { additionalProperties: false },
);
export const ApiKey = Type.Object({
  id: Str(),
  name: Str(),
  role: Role,
  createdAt: Iso('when created'),
});
export type ApiKey = Static<typeof ApiKey>;
export const CreatedKey = Type.Composite([
  ApiKey,
  Type.Object({ key: Str('the key itself: shown this once, stored only as a digest') }),
]);
export type CreatedKey = Static<typeof CreatedKey>;
export const KeyList = Type.Object({ keys: Type.Array(ApiKey) });

export const SessionBody = Type.Object(
  { key: Type.String({ minLength: 1, maxLength: 512 }) },
  { additionalProperties: false },
);
export const Session = Type.Object({
  name: Str(),
  role: Role,
  csrf: Str('send back as X-Callbridge-CSRF on every change made with the cookie'),
});
export type Session = Static<typeof Session>;

export const AuditEntry = Type.Object({
  id: Str(),
  at: Iso('when'),
  keyId: Type.Optional(
    Type.Union([Str(), Type.Null()], {
      description:
        'the id of the key that acted; null for ADMIN_TOKEN and the local CLI, which are no stored key',
    }),
  ),
  keyName: Str('the key that acted (admin-token for ADMIN_TOKEN, cli for the local CLI)'),
  role: Role,
  action: Str('call.hangup, campaign.start, … (docs/console.md)'),
  target: Str('what it acted on: a callSid, a campaign id, a number, a key id'),
  detail: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});
export type AuditEntry = Static<typeof AuditEntry>;
export const AuditQuery = Query({
  limit: Limit(PAGE_LIMITS.audit.max, PAGE_LIMITS.audit.fallback),
  cursor: Cursor,
});
export const AuditPage = Type.Object({ entries: Type.Array(AuditEntry), nextCursor: NextCursor });
