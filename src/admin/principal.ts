// Who is calling a /v1 route, as the admin scope found out (plugin.ts), and the audit entry a
// control action leaves under their name (docs/console.md, "Audit log").
import type { Role, SessionRecord } from '../store/access.js';
import type { OpenStreams } from './open-streams.js';

export interface Principal {
  /** The key's name; `admin-token` for ADMIN_TOKEN. */
  name: string;
  role: Role;
  /** The stored key's id; null for ADMIN_TOKEN. */
  keyId: string | null;
  /** How the request proved it: a bearer key, or the console's session cookie. */
  via: 'bearer' | 'cookie';
  session: SessionRecord | null;
}

export const ADMIN_TOKEN_NAME = 'admin-token';
/** The name the local CLI's changes are audited under (keys-command.ts). */
export const CLI_NAME = 'cli';

export type AuditAction =
  | 'call.hangup'
  | 'call.transfer'
  | 'call.listen'
  | 'call.place'
  | 'campaign.create'
  | 'campaign.contacts'
  | 'campaign.start'
  | 'campaign.pause'
  | 'campaign.resume'
  | 'campaign.cancel'
  | 'dnc.add'
  | 'dnc.remove'
  | 'key.create'
  | 'key.delete'
  | 'recording.pause'
  | 'recording.resume'
  | 'recording.delete'
  | 'recording.read'
  | 'campaign.results'
  | 'sessions.end'
  | 'webhook.retry';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the admin scope before any /v1 handler runs; null only on public routes. */
    principal: Principal | null;
    /** Where this request's streams are held to its credential (open-streams.ts); set on every /v1 request. */
    streams: OpenStreams | null;
    /** Writes an audit entry for this request's principal; never throws (a failure is logged). */
    audit(action: AuditAction, target: string, detail?: Record<string, unknown>): Promise<void>;
  }
}
