// A campaign's contacts in Redis: adding them in batches, listing and tallying them, and leasing,
// releasing and closing the waiting ones.
import { CONTACT_STATES, type ContactRecord } from '../campaign-records.js';
import {
  type AddContactsResult,
  type CampaignContacts,
  MAX_CONTACTS_PER_CAMPAIGN,
} from '../campaign-store.js';
import {
  ACCEPTS_CONTACTS,
  CANCELLED_NOTE,
  closeOnContact,
  emptyTally,
  isWaiting,
  newContactRecord,
  readContact,
  seqCursor,
  seqFromCursor,
} from '../campaign-transitions.js';
import { type CampaignContext, STALE } from './campaign-context.js';
import { redisScript } from './script.js';

/** Contacts per script run while adding: each run is short, so Redis never stalls on a big upload. */
const ADD_BATCH = 500;

const addBatch = redisScript(`
local meta = redis.call('GET', KEYS[1])
if not meta then return {'not_found'} end
local state = cjson.decode(meta).state
if not string.find(ARGV[2], ' ' .. state .. ' ', 1, true) then return {'ended'} end
local max = tonumber(ARGV[1])
local out = {}
local i = 3
while i <= #ARGV do
  local phone, json, vars = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  if phone ~= '' and redis.call('HEXISTS', KEYS[4], phone) == 1 then
    table.insert(out, 'dup')
  else
    local seq = tonumber(redis.call('GET', KEYS[2]) or '0') + 1
    if seq > max then
      table.insert(out, 'full')
    else
      redis.call('SET', KEYS[2], seq)
      local c = cjson.decode(json)
      c.seq = seq
      redis.call('HSET', KEYS[3], seq, cjson.encode(c))
      if phone ~= '' then
        redis.call('HSET', KEYS[4], phone, seq)
        redis.call('ZADD', KEYS[5], c.dueAtMs, seq)
        redis.call('ZADD', KEYS[6], seq, seq)
        for name in string.gmatch(vars, '[^\\n]+') do redis.call('HINCRBY', KEYS[9], name, 1) end
      else
        redis.call('ZADD', KEYS[7], seq, seq)
        redis.call('HINCRBY', KEYS[8], 'invalid', 1)
      end
      table.insert(out, 'ok')
    end
  end
  i = i + 3
end
return out
`);

const leaseDue = redisScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
local limit = tonumber(ARGV[2])
local held = redis.call('ZCARD', KEYS[2])
local candidates = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, limit + held)
local out = {}
for _, seq in ipairs(candidates) do
  if #out >= limit then break end
  if not redis.call('ZSCORE', KEYS[2], seq) then
    redis.call('ZADD', KEYS[2], ARGV[3], seq)
    table.insert(out, seq)
  end
end
return out
`);

// KEYS: contacts, due, leased, st:<old>, st:<new>, outcomes
// ARGV: seq, expected JSON, new JSON, due time or '' (not waiting), final outcome or ''
const moveContact = redisScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('ZREM', KEYS[3], ARGV[1])
if KEYS[4] ~= KEYS[5] then
  redis.call('ZREM', KEYS[4], ARGV[1])
  redis.call('ZADD', KEYS[5], ARGV[1], ARGV[1])
end
if ARGV[4] ~= '' then redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1]) else redis.call('ZREM', KEYS[2], ARGV[1]) end
if ARGV[5] ~= '' then redis.call('HINCRBY', KEYS[6], ARGV[5], 1) end
return 1
`);

export function redisCampaignContacts(ctx: CampaignContext): CampaignContacts {
  const { client, k, rawContact, casContact } = ctx;

  /** Writes `next` over the contact read as `json`, moving it between the state and due indexes. */
  async function writeContact(id: string, json: string, before: ContactRecord, next: ContactRecord) {
    const keys = k(id);
    const due = isWaiting(next.state) ? String(next.dueAtMs) : '';
    const outcome = next.state === 'done' && before.state !== 'done' ? (next.outcome ?? '') : '';
    const done = await moveContact(
      client,
      [keys.contacts, keys.due, keys.leased, keys.state(before.state), keys.state(next.state), keys.outcomes],
      [String(next.seq), json, JSON.stringify(next), due, outcome],
    );
    return done === 1 ? true : STALE;
  }

  async function closeContact(
    id: string,
    seq: number,
    close: Parameters<CampaignContacts['closeContact']>[2],
  ) {
    const closed = await casContact(id, seq, async (contact, json) => {
      if (!isWaiting(contact.state)) return false;
      return writeContact(id, json, contact, closeOnContact(contact, close));
    });
    return closed === true;
  }

  return {
    async addContacts(id, contacts, nowMs): Promise<AddContactsResult> {
      const keys = k(id);
      const duplicates: number[] = [];
      const refused: number[] = [];
      let added = 0;
      for (let start = 0; start < contacts.length || start === 0; start += ADD_BATCH) {
        const batch = contacts.slice(start, start + ADD_BATCH);
        const args: string[] = [String(MAX_CONTACTS_PER_CAMPAIGN), ` ${ACCEPTS_CONTACTS.join(' ')} `];
        for (const contact of batch) {
          const record = newContactRecord(id, 0, contact, nowMs);
          const named = Object.entries(contact.variables)
            .filter(([name, value]) => value.trim() !== '' && !name.includes('\n'))
            .map(([name]) => name);
          args.push(contact.invalid === null ? contact.phone : '', JSON.stringify(record), named.join('\n'));
        }
        const out = (await addBatch(
          client,
          [
            keys.meta,
            keys.seq,
            keys.contacts,
            keys.phones,
            keys.due,
            keys.state('pending'),
            keys.state('done'),
            keys.outcomes,
            keys.vars,
          ],
          args,
        )) as string[];
        if (out[0] === 'not_found' || out[0] === 'ended') {
          if (start === 0) return { ok: false, reason: out[0] };
          for (let i = start; i < contacts.length; i++) refused.push(i);
          return { ok: true, added, duplicates, refused, refusedReason: 'ended' };
        }
        for (const [i, verdict] of out.entries()) {
          if (verdict === 'dup') duplicates.push(start + i);
          else if (verdict === 'full') refused.push(start + i);
          else added += 1;
        }
        if (batch.length === 0) break;
      }
      return { ok: true, added, duplicates, refused, refusedReason: refused.length > 0 ? 'full' : null };
    },

    async getContact(id, seq) {
      const json = await rawContact(id, seq);
      return json === null ? null : readContact(json);
    },

    async listContacts(id, { state, limit, cursor }) {
      const keys = k(id);
      const after = cursor === undefined ? 0 : seqFromCursor(cursor);
      let seqs: string[];
      if (state === undefined) {
        const last = Number((await client.get(keys.seq)) ?? 0);
        const end = Math.min(last, after + limit + 1);
        seqs = [];
        for (let seq = after + 1; seq <= end; seq++) seqs.push(String(seq));
      } else {
        seqs = await client.zrangebyscore(keys.state(state), `(${after}`, '+inf', 'LIMIT', 0, limit + 1);
      }
      const jsons = seqs.length === 0 ? [] : await client.hmget(keys.contacts, ...seqs.slice(0, limit));
      const contacts = jsons.filter((json): json is string => json !== null).map(readContact);
      const lastSeq = contacts.at(-1)?.seq;
      return {
        contacts,
        nextCursor: seqs.length > limit && lastSeq !== undefined ? seqCursor(lastSeq) : null,
      };
    },

    async contactTally(id) {
      const keys = k(id);
      const tx = client.multi();
      for (const state of CONTACT_STATES) tx.zcard(keys.state(state));
      tx.hgetall(keys.outcomes).hgetall(keys.vars);
      const replies = (await tx.exec()) ?? [];
      const tally = emptyTally();
      let total = 0;
      for (const [i, state] of CONTACT_STATES.entries()) {
        tally.states[state] = Number(replies[i]?.[1] ?? 0);
        total += tally.states[state];
      }
      const outcomes = (replies[CONTACT_STATES.length]?.[1] ?? {}) as Record<string, string>;
      for (const [outcome, n] of Object.entries(outcomes)) {
        if (outcome in tally.outcomes) tally.outcomes[outcome as keyof typeof tally.outcomes] = Number(n);
      }
      const variables = (replies[CONTACT_STATES.length + 1]?.[1] ?? {}) as Record<string, string>;
      for (const [name, n] of Object.entries(variables)) tally.variables[name] = Number(n);
      tally.callable = total - tally.outcomes.invalid;
      return tally;
    },

    async leaseDueContacts(id, { nowMs, limit, leaseMs }) {
      const keys = k(id);
      const seqs = (await leaseDue(
        client,
        [keys.due, keys.leased],
        [nowMs, limit, nowMs + leaseMs],
      )) as string[];
      if (seqs.length === 0) return [];
      const jsons = await client.hmget(keys.contacts, ...seqs);
      return jsons.filter((json): json is string => json !== null).map(readContact);
    },

    async releaseContact(id, seq, dueAtMs) {
      await casContact(id, seq, async (contact, json) => {
        if (!isWaiting(contact.state)) return false;
        return writeContact(id, json, contact, { ...contact, dueAtMs });
      });
    },

    closeContact,

    async cancelWaitingContacts(id, limit, nowMs) {
      const keys = k(id);
      const [pending, retry] = await Promise.all([
        client.zrange(keys.state('pending'), 0, limit - 1),
        client.zrange(keys.state('retry'), 0, limit - 1),
      ]);
      let closed = 0;
      for (const seq of [...pending, ...retry].slice(0, limit)) {
        const done = await closeContact(id, Number(seq), {
          outcome: 'cancelled',
          note: CANCELLED_NOTE,
          nowMs,
        });
        if (done) closed += 1;
      }
      return closed;
    },

    async hasUnfinishedContacts(id) {
      const keys = k(id);
      const replies =
        (await client
          .multi()
          .zcard(keys.state('pending'))
          .zcard(keys.state('retry'))
          .zcard(keys.state('dialing'))
          .exec()) ?? [];
      return replies.some(([, n]) => Number(n) > 0);
    },

    async nextDueAtMs(id) {
      const first = await client.zrange(k(id).due, 0, 0, 'WITHSCORES');
      return first[1] === undefined ? null : Number(first[1]);
    },
  };
}
