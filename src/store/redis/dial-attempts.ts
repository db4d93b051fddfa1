// A campaign's dial attempts in Redis: tying one to its call id, finishing it onto its contact, and
// handing it to another dialer; beginning one under the pace and the cap is attempt-begin.ts.
import { type OpenAttempt } from '../campaign-records.js';
import type { DialAttempts } from '../campaign-store.js';
import { callSidOnContact, finishOnContact, isWaiting, readContact } from '../campaign-transitions.js';
import { beginAttemptInRedis } from './attempt-begin.js';
import { type CampaignContext, STALE, untilWon } from './campaign-context.js';
import { redisScript } from './script.js';

const CALL_INDEX_TTL_MS = 24 * 60 * 60_000;

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

export function redisDialAttempts(ctx: CampaignContext): DialAttempts {
  const { client, k, callKey, rawContact, casContact } = ctx;

  async function readOpen(id: string, attemptIdValue: string): Promise<OpenAttempt | null> {
    const json = await client.hget(k(id).open, attemptIdValue);
    return json === null ? null : (JSON.parse(json) as OpenAttempt);
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

  return {
    beginAttempt: (input) => beginAttemptInRedis(ctx, input),

    recordCallSid: (id, attemptIdValue, callSid) => writeCallSid(id, attemptIdValue, callSid, false),
    identifyCall: (id, attemptIdValue, callSid) => writeCallSid(id, attemptIdValue, callSid, true),

    getOpenAttempt: readOpen,

    async findAttemptByCallSid(callSid) {
      const entry = await client.get(callKey(callSid));
      if (entry === null) return null;
      const [id, attemptIdValue] = entry.split(' ') as [string, string];
      return readOpen(id, attemptIdValue);
    },

    async finishAttempt(input) {
      const keys = k(input.campaignId);
      const attempt = await readOpen(input.campaignId, input.attemptId);
      if (attempt === null) return null;
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
  };
}
