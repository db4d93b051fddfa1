// A campaign's contacts in Redis: listing and tallying them, and leasing, releasing and closing the
// waiting ones; adding them is contact-upload.ts.
import { CONTACT_STATES, type ContactRecord } from '../campaign-records.js';
import type { CampaignContacts, ContactTally } from '../campaign-store.js';
import {
  CANCELLED_NOTE,
  closeOnContact,
  emptyTally,
  isWaiting,
  readContact,
  seqCursor,
  seqFromCursor,
} from '../campaign-transitions.js';
import { type CampaignContext, STALE } from './campaign-context.js';
import { addContactsInBatches } from './contact-upload.js';
import { redisScript } from './script.js';

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

/** Contacts per state, final outcome and variable, and those that can be called. */
async function readContactTally(ctx: CampaignContext, id: string): Promise<ContactTally> {
  const { client, k } = ctx;
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
}

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
    addContacts: (id, contacts, nowMs) => addContactsInBatches(ctx, id, contacts, nowMs),

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

    contactTally: (id) => readContactTally(ctx, id),

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
