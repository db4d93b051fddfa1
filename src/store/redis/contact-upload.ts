// Adding contacts to a campaign in Redis: in batches of one script run each, every contact checked
// against the campaign's state, its duplicates and its size as it lands.
import type { NewContact } from '../campaign-records.js';
import { type AddContactsResult, MAX_CONTACTS_PER_CAMPAIGN } from '../campaign-store.js';
import { ACCEPTS_CONTACTS, newContactRecord } from '../campaign-transitions.js';
import type { CampaignContext } from './campaign-context.js';
import { redisScript } from './script.js';

/** Contacts per script run while adding: each run is short, so Redis never stalls on a big upload. */
const ADD_BATCH = 500;

// KEYS: meta, seq, contacts, phones, due, st:pending, st:done, outcomes, vars
// ARGV: most contacts, ' <states accepting contacts> ', then per contact: phone or '' (invalid),
//       contact JSON, its named variables one a line
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

/** The script's arguments for one batch: the bounds, then three per contact. */
function batchArgs(id: string, batch: readonly NewContact[], nowMs: number): string[] {
  const args: string[] = [String(MAX_CONTACTS_PER_CAMPAIGN), ` ${ACCEPTS_CONTACTS.join(' ')} `];
  for (const contact of batch) {
    const record = newContactRecord(id, 0, contact, nowMs);
    const named = Object.entries(contact.variables)
      .filter(([name, value]) => value.trim() !== '' && !name.includes('\n'))
      .map(([name]) => name);
    args.push(contact.invalid === null ? contact.phone : '', JSON.stringify(record), named.join('\n'));
  }
  return args;
}

export async function addContactsInBatches(
  ctx: CampaignContext,
  id: string,
  contacts: readonly NewContact[],
  nowMs: number,
): Promise<AddContactsResult> {
  const keys = ctx.k(id);
  const duplicates: number[] = [];
  const refused: number[] = [];
  let added = 0;
  for (let start = 0; start < contacts.length || start === 0; start += ADD_BATCH) {
    const batch = contacts.slice(start, start + ADD_BATCH);
    const out = (await addBatch(
      ctx.client,
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
      batchArgs(id, batch, nowMs),
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
}
