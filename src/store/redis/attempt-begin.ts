// Beginning a dial attempt in Redis: the contact leaves the waiting sets for `dialing`, the attempt
// opens, and the pace's next state is stored, all in one script that holds the cap on calls in flight.
import { type BeginAttempt, type BeginResult, STARTS_KEPT_MS } from '../campaign-store.js';
import { beginOnContact, isWaiting, readContact } from '../campaign-transitions.js';
import { readPaceState, takePaceSlot, writePaceState } from '../pace.js';
import { type CampaignContext, STALE, untilWon } from './campaign-context.js';
import { redisScript } from './script.js';

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

export async function beginAttemptInRedis(ctx: CampaignContext, input: BeginAttempt): Promise<BeginResult> {
  const { client, k, rawContact } = ctx;
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
}
