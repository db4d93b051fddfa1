// Campaigns, their contacts, the attempts in flight and the breaker's window, in Redis. A campaign's
// keys share the hash tag `{c:<id>}`, so each step that must be atomic is one Lua script on one
// slot; a campaign holds at most MAX_CONTACTS_PER_CAMPAIGN contacts, so no slot grows without bound,
// and every key of an ended campaign expires after the retention period. Contact changes are
// computed in JavaScript (campaign-transitions.ts and pace.ts, shared with SQLite) and written by a
// script only if what was read is still stored: a compare-and-set that retries on a lost race
// (`untilWon`, the one loop every such step goes through).
//
//   {c:<id>}:meta          the campaign JSON
//   {c:<id>}:seq           the last contact seq handed out
//   {c:<id>}:contacts      hash seq → contact JSON
//   {c:<id>}:phones        hash E.164 → seq (duplicates)
//   {c:<id>}:due           sorted set of waiting contacts by due time
//   {c:<id>}:leased        sorted set of leased contacts by lease end
//   {c:<id>}:st:<state>    sorted set of contacts in that state, by seq
//   {c:<id>}:outcomes      hash final outcome → contacts
//   {c:<id>}:vars          hash variable → callable contacts with a value
//   {c:<id>}:open          hash attempt id → open attempt JSON (its length is the calls in flight)
//   {c:<id>}:dials         the pace's state (pace.ts), JSON
//   {c:<id>}:starts        sorted set of attempt ids by start (the last ten minutes)
//   {c:<id>}:results       sorted set of finished attempt ids by end; {c:<id>}:failures the failed ones
//   {campaigns}:index      sorted set, member = 16-digit creation ms + id, for listing
//   {campaigns}:active     set of campaign ids a dialer may have work in (a hint: settleCampaign)
//   attempt-call:<callSid> `<campaign id> <attempt id>`, for a day
import type { Redis } from 'ioredis';
import {
  type CampaignRecord,
  CONTACT_STATES,
  type ContactRecord,
  type ContactState,
  type OpenAttempt,
} from '../campaign-records.js';
import {
  type AddContactsResult,
  type BeginResult,
  CAMPAIGN_RETENTION_MS,
  type CampaignContacts,
  type Campaigns,
  type DialAttempts,
  type DialResults,
  MAX_CONTACTS_PER_CAMPAIGN,
} from '../campaign-store.js';
import {
  ACCEPTS_CONTACTS,
  beginOnContact,
  CANCELLED_NOTE,
  callSidOnContact,
  closeOnContact,
  decodeCursor,
  emptyTally,
  encodeCursor,
  finishOnContact,
  isWaiting,
  newContactRecord,
  readContact,
  seqCursor,
  seqFromCursor,
} from '../campaign-transitions.js';
import { readPaceState, takePaceSlot, writePaceState } from '../pace.js';
import { redisScript } from './script.js';

const MS_DIGITS = 16;
const STARTS_KEPT_MS = 10 * 60_000;
/** Contacts per script run while adding: each run is short, so Redis never stalls on a big upload. */
const ADD_BATCH = 500;
/** The breaker's window holds at most this many results, however fast the campaign dials. */
const MAX_RESULTS = 100_000;
/** Campaign list entries kept: far more than any operator pages through. */
const MAX_INDEXED_CAMPAIGNS = 100_000;
const CALL_INDEX_TTL_MS = 24 * 60 * 60_000;
/** A compare-and-set lost this many times in a row means something is wrong; give up loudly. */
const MAX_CAS_TRIES = 20;
const CAMPAIGN_CURSOR = new RegExp(`^\\d{${MS_DIGITS}}cmp_[a-z0-9]{1,40}$`);

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

// The pace is decided in JavaScript (pace.ts) on the state read; the script writes the next state
// only if that one is still stored.
// KEYS: meta, contacts, due, leased, st:<old>, st:dialing, open, dials, starts
// ARGV: seq, expected, new, attempt id, attempt JSON, now, cap, expected pace or '', new pace, starts kept
const begin = redisScript(`
local meta = redis.call('GET', KEYS[1])
if not meta or cjson.decode(meta).state ~= 'running' then return 'not_running' end
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return 'stale' end
if redis.call('HLEN', KEYS[7]) >= tonumber(ARGV[7]) then return 'cap' end
if (redis.call('GET', KEYS[8]) or '') ~= ARGV[8] then return 'stale' end
local now = tonumber(ARGV[6])
redis.call('SET', KEYS[8], ARGV[9])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('ZREM', KEYS[5], ARGV[1])
redis.call('ZADD', KEYS[6], ARGV[1], ARGV[1])
redis.call('HSET', KEYS[7], ARGV[4], ARGV[5])
redis.call('ZADD', KEYS[9], now, ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[9], '-inf', now - tonumber(ARGV[10]))
return 'ok'
`);

// KEYS: open, contacts
// ARGV: attempt id, new attempt JSON, seq, expected contact, new contact, expected attempt JSON
const setCallSid = redisScript(`
local open = redis.call('HGET', KEYS[1], ARGV[1])
if not open then return 'not_open' end
if open ~= ARGV[6] then return 'stale' end
if redis.call('HGET', KEYS[2], ARGV[3]) ~= ARGV[4] then return 'stale' end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[3], ARGV[5])
return 'ok'
`);

// KEYS: open, contacts, due, st:<old>, st:<new>, outcomes
// ARGV: attempt id, seq, expected, new, due time or '', final outcome or ''
const finish = redisScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 'not_open' end
if redis.call('HGET', KEYS[2], ARGV[2]) ~= ARGV[3] then return 'stale' end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[4])
if KEYS[4] ~= KEYS[5] then
  redis.call('ZREM', KEYS[4], ARGV[2])
  redis.call('ZADD', KEYS[5], ARGV[2], ARGV[2])
end
if ARGV[5] ~= '' then redis.call('ZADD', KEYS[3], ARGV[5], ARGV[2]) end
if ARGV[6] ~= '' then redis.call('HINCRBY', KEYS[6], ARGV[6], 1) end
return 'ok'
`);

const adopt = redisScript(`
local json = redis.call('HGET', KEYS[1], ARGV[1])
if not json then return 0 end
local a = cjson.decode(json)
if a.owner ~= ARGV[2] then return 0 end
a.owner = ARGV[3]
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(a))
return 1
`);

/** What a compare-and-set step answers when what it read changed before its write. */
const STALE = 'stale';
type Stale = typeof STALE;

/** Runs a read-decide-write step until its write finds what it read still stored. */
async function untilWon<T>(what: string, step: () => Promise<T | Stale>): Promise<T> {
  for (let tries = 0; tries < MAX_CAS_TRIES; tries++) {
    const result = await step();
    if (result !== STALE) return result;
  }
  throw new Error(`${what}: lost ${MAX_CAS_TRIES} races in a row`);
}

const compareAndSet = redisScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
`);

export type RedisCampaigns = Campaigns & CampaignContacts & DialAttempts & DialResults;

export function redisCampaigns(client: Redis, prefix: string): RedisCampaigns {
  const k = (id: string) => {
    const tag = `${prefix}{c:${id}}`;
    return {
      meta: `${tag}:meta`,
      seq: `${tag}:seq`,
      contacts: `${tag}:contacts`,
      phones: `${tag}:phones`,
      due: `${tag}:due`,
      leased: `${tag}:leased`,
      state: (state: ContactState) => `${tag}:st:${state}`,
      outcomes: `${tag}:outcomes`,
      vars: `${tag}:vars`,
      open: `${tag}:open`,
      dials: `${tag}:dials`,
      /** Left by the token bucket the pace once was; expired with the rest. */
      legacyPace: `${tag}:pace`,
      starts: `${tag}:starts`,
      results: `${tag}:results`,
      failures: `${tag}:failures`,
    };
  };
  const allKeys = (id: string) => {
    const keys = k(id);
    return [
      keys.meta,
      keys.seq,
      keys.contacts,
      keys.phones,
      keys.due,
      keys.leased,
      ...CONTACT_STATES.map(keys.state),
      keys.outcomes,
      keys.vars,
      keys.open,
      keys.dials,
      keys.legacyPace,
      keys.starts,
      keys.results,
      keys.failures,
    ];
  };
  const index = `${prefix}{campaigns}:index`;
  const active = `${prefix}{campaigns}:active`;
  const callKey = (callSid: string) => `${prefix}attempt-call:${callSid}`;
  const member = (record: CampaignRecord) =>
    `${String(record.createdAtMs).padStart(MS_DIGITS, '0')}${record.id}`;

  const rawContact = (id: string, seq: number) => client.hget(k(id).contacts, String(seq));

  /** Reads the contact and lets `step` decide and write, if the contact is unchanged meanwhile. */
  function casContact<T>(
    id: string,
    seq: number,
    step: (contact: ContactRecord, json: string) => Promise<T | Stale>,
  ): Promise<T | null> {
    return untilWon(`campaign ${id} contact ${seq}`, async () => {
      const json = await rawContact(id, seq);
      return json === null ? null : step(readContact(json), json);
    });
  }

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

  /**
   * Sets an open attempt's call id (and its contact's copy) and indexes the attempt by it: only
   * while it has none, unless `replace`. The open attempt and the contact are both compared on write.
   */
  function writeCallSid(id: string, attemptIdValue: string, callSid: string, replace: boolean) {
    const keys = k(id);
    return untilWon(`campaign ${id} attempt ${attemptIdValue}`, async () => {
      const openJson = await client.hget(keys.open, attemptIdValue);
      if (openJson === null) return false;
      const open = JSON.parse(openJson) as OpenAttempt;
      if (open.callSid === callSid) return true;
      if (open.callSid !== null && !replace) return false;
      const contactJson = await rawContact(id, open.contactId);
      if (contactJson === null) return false;
      const contact = readContact(contactJson);
      const next = callSidOnContact(contact, attemptIdValue, callSid);
      const reply = await setCallSid(
        client,
        [keys.open, keys.contacts],
        [
          attemptIdValue,
          JSON.stringify({ ...open, callSid }),
          String(contact.seq),
          contactJson,
          JSON.stringify(next),
          openJson,
        ],
      );
      if (reply === 'not_open') return false;
      if (reply !== 'ok') return STALE;
      await client.set(callKey(callSid), `${id} ${attemptIdValue}`, 'PX', CALL_INDEX_TTL_MS);
      if (open.callSid !== null) await client.del(callKey(open.callSid));
      return true;
    });
  }

  async function expireCampaign(id: string) {
    const tx = client.multi();
    for (const key of allKeys(id)) tx.pexpire(key, CAMPAIGN_RETENTION_MS);
    await tx.exec();
  }

  return {
    async createCampaign(record) {
      await client
        .multi()
        .set(k(record.id).meta, JSON.stringify(record), 'NX')
        .zadd(index, 0, member(record))
        .zremrangebyrank(index, 0, -MAX_INDEXED_CAMPAIGNS - 1)
        .exec();
    },

    async getCampaign(id) {
      const json = await client.get(k(id).meta);
      return json === null ? null : (JSON.parse(json) as CampaignRecord);
    },

    async listCampaigns({ limit, cursor }) {
      let max = cursor === undefined ? '+' : `(${decodeCursor(cursor, CAMPAIGN_CURSOR)}`;
      const campaigns: CampaignRecord[] = [];
      let last: string | null = null;
      // Members whose campaign expired are skipped (and dropped); a page reads on until it is full.
      for (let rounds = 0; rounds < 20; rounds++) {
        const members = await client.zrevrangebylex(index, max, '-', 'LIMIT', 0, limit + 1);
        if (members.length === 0) return { campaigns, nextCursor: null };
        const jsons = await client.mget(members.map((m) => k(m.slice(MS_DIGITS)).meta));
        for (const [i, m] of members.entries()) {
          const json = jsons[i];
          if (json === null || json === undefined) {
            await client.zrem(index, m);
            continue;
          }
          if (campaigns.length === limit) return { campaigns, nextCursor: encodeCursor(last ?? m) };
          campaigns.push(JSON.parse(json) as CampaignRecord);
          last = m;
        }
        if (members.length < limit + 1) return { campaigns, nextCursor: null };
        max = `(${members.at(-1)}`;
      }
      return { campaigns, nextCursor: last === null ? null : encodeCursor(last) };
    },

    transitionCampaign(id, from, to, patch) {
      const key = k(id).meta;
      return untilWon(`campaign ${id}`, async () => {
        const json = await client.get(key);
        if (json === null) return null;
        const record = JSON.parse(json) as CampaignRecord;
        if (!from.includes(record.state)) return null;
        const next: CampaignRecord = { ...record, ...patch, state: to };
        // Listed before the change, so a dialer can never miss a running campaign.
        if (to === 'running' || to === 'paused') await client.sadd(active, id);
        if ((await compareAndSet(client, [key], [json, JSON.stringify(next)])) !== 1) return STALE;
        if (to === 'completed' || to === 'cancelled') await expireCampaign(id);
        return next;
      });
    },

    async activeCampaignIds() {
      return client.smembers(active);
    },

    async settleCampaign(id) {
      const keys = k(id);
      const [json, open] = await Promise.all([client.get(keys.meta), client.hlen(keys.open)]);
      const state = json === null ? null : (JSON.parse(json) as CampaignRecord).state;
      if (state === null || ((state === 'completed' || state === 'cancelled') && open === 0)) {
        await client.srem(active, id);
      }
    },

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

    async beginAttempt(input): Promise<BeginResult> {
      const keys = k(input.campaignId);
      const result = await untilWon(`campaign ${input.campaignId} contact ${input.seq}`, async () => {
        // Both read in one round trip: the claim then lands as close as it can to `nowMs`.
        const [json, stored] = await Promise.all([
          rawContact(input.campaignId, input.seq),
          client.get(keys.dials),
        ]);
        if (json === null) return null;
        const contact = readContact(json);
        if (!isWaiting(contact.state)) return { ok: false, reason: 'not_waiting' } as const;
        const paceJson = stored ?? '';
        const pace = takePaceSlot(readPaceState(paceJson), input.nowMs, input.callsPerSecond);
        if (!pace.ok) return { ok: false, reason: 'pace', waitMs: pace.waitMs } as const;
        const begun = beginOnContact(contact, input);
        const reply = await begin(
          client,
          [
            keys.meta,
            keys.contacts,
            keys.due,
            keys.leased,
            keys.state(contact.state),
            keys.state('dialing'),
            keys.open,
            keys.dials,
            keys.starts,
          ],
          [
            String(input.seq),
            json,
            JSON.stringify(begun.contact),
            begun.attempt.id,
            JSON.stringify(begun.attempt),
            String(input.nowMs),
            String(input.maxConcurrent),
            paceJson,
            writePaceState(pace.state),
            String(STARTS_KEPT_MS),
          ],
        );
        switch (reply) {
          case 'ok':
            return { ok: true, attempt: begun.attempt, contact: begun.contact } as const;
          case STALE:
            return STALE;
          case 'cap':
            return { ok: false, reason: 'cap' } as const;
          default:
            return { ok: false, reason: 'not_running' } as const;
        }
      });
      return result ?? { ok: false, reason: 'not_waiting' };
    },

    recordCallSid: (id, attemptIdValue, callSid) => writeCallSid(id, attemptIdValue, callSid, false),
    identifyCall: (id, attemptIdValue, callSid) => writeCallSid(id, attemptIdValue, callSid, true),

    async getOpenAttempt(id, attemptIdValue) {
      const json = await client.hget(k(id).open, attemptIdValue);
      return json === null ? null : (JSON.parse(json) as OpenAttempt);
    },

    async findAttemptByCallSid(callSid) {
      const entry = await client.get(callKey(callSid));
      if (entry === null) return null;
      const [id, attemptIdValue] = entry.split(' ') as [string, string];
      const json = await client.hget(k(id).open, attemptIdValue);
      return json === null ? null : (JSON.parse(json) as OpenAttempt);
    },

    async finishAttempt(input) {
      const keys = k(input.campaignId);
      const openJson = await client.hget(keys.open, input.attemptId);
      if (openJson === null) return null;
      const attempt = JSON.parse(openJson) as OpenAttempt;
      return casContact(input.campaignId, attempt.contactId, async (contact, json) => {
        const next = finishOnContact(contact, input);
        const reply = await finish(
          client,
          [
            keys.open,
            keys.contacts,
            keys.due,
            keys.state(contact.state),
            keys.state(next.state),
            keys.outcomes,
          ],
          [
            input.attemptId,
            String(contact.seq),
            json,
            JSON.stringify(next),
            isWaiting(next.state) ? String(next.dueAtMs) : '',
            next.state === 'done' ? (next.outcome ?? '') : '',
          ],
        );
        if (reply === STALE) return STALE;
        return reply === 'ok' ? next : null;
      });
    },

    async openAttempts(id) {
      return (await client.hvals(k(id).open)).map((json) => JSON.parse(json) as OpenAttempt);
    },

    async adoptAttempt(id, attemptIdValue, fromOwner, toOwner) {
      return (await adopt(client, [k(id).open], [attemptIdValue, fromOwner, toOwner])) === 1;
    },

    async attemptsBegunSince(id, sinceMs) {
      return client.zcount(k(id).starts, sinceMs, '+inf');
    },

    async recordDialResult(id, result, keepMs) {
      const keys = k(id);
      const oldest = result.atMs - keepMs;
      const tx = client.multi().zadd(keys.results, result.atMs, result.id);
      if (result.failed) tx.zadd(keys.failures, result.atMs, result.id);
      await tx
        .zremrangebyscore(keys.results, '-inf', `(${oldest}`)
        .zremrangebyscore(keys.failures, '-inf', `(${oldest}`)
        .zremrangebyrank(keys.results, 0, -MAX_RESULTS - 1)
        .zremrangebyrank(keys.failures, 0, -MAX_RESULTS - 1)
        .exec();
    },

    async dialResultCounts(id, sinceMs) {
      const keys = k(id);
      const replies =
        (await client
          .multi()
          .zcount(keys.results, sinceMs, '+inf')
          .zcount(keys.failures, sinceMs, '+inf')
          .exec()) ?? [];
      return { calls: Number(replies[0]?.[1] ?? 0), failures: Number(replies[1]?.[1] ?? 0) };
    },
  };
}
