// API keys, console sessions and the audit log in Redis (src/store/access.ts; keys in keys.ts):
// every instance of a fleet accepts a session signed in on any other, and a deleted key's sessions
// go with it.
import type { Redis } from 'ioredis';
import { BadRequestError } from '../../errors.js';
import {
  type AccessStore,
  type ApiKeyRecord,
  AUDIT_MAX_ENTRIES,
  type AuditEntry,
  type SessionRecord,
} from '../access.js';
import type { Clock } from '../store.js';

const STREAM_ID = /^\d{1,15}-\d{1,15}$/;

function parseJson<T>(text: string | null): T | null {
  if (text === null) return null;
  try {
    return JSON.parse(text) as T;
  } catch {
    return null;
  }
}

function entryOf(id: string, fields: string[]): AuditEntry | null {
  // One field, `entry`, holding the entry's JSON.
  const entry = parseJson<Omit<AuditEntry, 'id'>>(fields[1] ?? null);
  return entry ? { ...entry, keyId: entry.keyId ?? null, id } : null;
}

export function redisAccess(client: Redis, prefix: string, now: Clock): AccessStore {
  const keys = `${prefix}api-keys`;
  const session = (id: string) => `${prefix}session:${id}`;
  const keySessions = (keyId: string) => `${prefix}key-sessions:${keyId}`;
  /** Every session's id, so all can be ended at once; names past their session point at nothing. */
  const allSessions = `${prefix}sessions`;
  const audit = `${prefix}audit`;

  return {
    async saveApiKey(key) {
      await client.hset(keys, key.id, JSON.stringify(key));
    },
    async getApiKey(id) {
      return parseJson<ApiKeyRecord>(await client.hget(keys, id));
    },
    async listApiKeys() {
      const all = Object.values(await client.hgetall(keys))
        .map((text) => parseJson<ApiKeyRecord>(text))
        .filter((key): key is ApiKeyRecord => key !== null);
      return all.sort((a, b) => a.createdAtMs - b.createdAtMs || a.id.localeCompare(b.id));
    },
    async deleteApiKey(id) {
      const removed = await client.hdel(keys, id);
      const sessions = await client.smembers(keySessions(id));
      // One key per DEL: sessions hash to their own cluster slots.
      await Promise.all([...sessions.map((s) => client.del(session(s))), client.del(keySessions(id))]);
      return removed === 1;
    },
    async saveSession(s: SessionRecord) {
      const ttlMs = s.expiresAtMs - now();
      if (ttlMs <= 0) return;
      await client.set(session(s.id), JSON.stringify(s), 'PX', ttlMs);
      await client.sadd(allSessions, s.id);
      if ((await client.pttl(allSessions)) < ttlMs) await client.pexpire(allSessions, ttlMs);
      if (s.keyId !== null) {
        await client.sadd(keySessions(s.keyId), s.id);
        // The index outlives the newest session it names; older names in it point at nothing.
        const remaining = await client.pttl(keySessions(s.keyId));
        if (remaining < ttlMs) await client.pexpire(keySessions(s.keyId), ttlMs);
      }
    },
    async getSession(id) {
      const found = parseJson<SessionRecord>(await client.get(session(id)));
      return found && found.expiresAtMs > now() ? found : null;
    },
    async deleteSession(id) {
      await client.del(session(id));
      await client.srem(allSessions, id);
    },
    async deleteAllSessions() {
      const ids = await client.smembers(allSessions);
      if (ids.length === 0) return;
      // One key per DEL: sessions hash to their own cluster slots.
      await Promise.all([...ids.map((id) => client.del(session(id))), client.srem(allSessions, ...ids)]);
    },
    async appendAudit(entry) {
      const id = await client.xadd(
        audit,
        'MAXLEN',
        '~',
        String(AUDIT_MAX_ENTRIES),
        '*',
        'entry',
        JSON.stringify({ ...entry, keyId: entry.keyId ?? null }),
      );
      return { ...entry, keyId: entry.keyId ?? null, id: id! };
    },
    async listAudit(query) {
      if (query.cursor !== undefined && !STREAM_ID.test(query.cursor)) {
        throw new BadRequestError('cursor is not one a previous page handed out');
      }
      const end = query.cursor === undefined ? '+' : `(${query.cursor}`;
      const rows = await client.xrevrange(audit, end, '-', 'COUNT', query.limit + 1);
      const page = rows.slice(0, query.limit);
      return {
        entries: page.map(([id, fields]) => entryOf(id, fields)).filter((e): e is AuditEntry => e !== null),
        nextCursor: rows.length > query.limit ? page.at(-1)![0] : null,
      };
    },
  };
}
