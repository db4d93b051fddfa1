// The key layout before call records spread over the cluster and dead letters got their listing
// order, upgraded in place when a store opens, so an upgraded fleet keeps its records and letters:
//
//   {calls}:record:<callSid> + {calls}:by-start  →  call:<callSid> + calls-by-start:<day> (keys.ts)
//   {queue}:dead alone                           →  {queue}:dead-at built from the letters
//
// Each step is safe to run twice or from two instances at once: a record moved twice is saved twice.
import type { Redis } from 'ioredis';
import type { StoreLimits } from '../limits.js';
import type { CallRecord } from '../call-record.js';
import type { CallRecords, DeadLetter } from '../store.js';
import type { RedisKeys } from './keys.js';

const BATCH = 500;
const MS_DIGITS = 16;

export async function upgradeLegacyLayout(
  client: Redis,
  prefix: string,
  keys: RedisKeys,
  records: CallRecords,
  limits: StoreLimits,
): Promise<void> {
  await moveLegacyCallRecords(client, prefix, records);
  await indexLegacyDeadLetters(client, keys, limits);
}

async function moveLegacyCallRecords(client: Redis, prefix: string, records: CallRecords): Promise<void> {
  const index = `${prefix}{calls}:by-start`;
  for (;;) {
    const members = await client.zrange(index, 0, BATCH - 1);
    if (members.length === 0) return;
    for (const member of members) {
      const legacyKey = `${prefix}{calls}:record:${member.slice(MS_DIGITS)}`;
      const json = await client.get(legacyKey);
      // saveCallRecord keeps the retention: a record already past it is dropped, not moved.
      if (json !== null) await records.saveCallRecord(JSON.parse(json) as CallRecord);
      await client.del(legacyKey);
    }
    await client.zrem(index, ...members);
  }
}

async function indexLegacyDeadLetters(client: Redis, keys: RedisKeys, limits: StoreLimits): Promise<void> {
  const { dead, deadAt } = keys.queue;
  if ((await client.exists(dead)) === 0 || (await client.exists(deadAt)) === 1) return;
  let cursor = '0';
  do {
    const [next, flat] = await client.hscan(dead, cursor, 'COUNT', BATCH);
    const scores: Array<number | string> = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const letter = JSON.parse(flat[i + 1]!) as DeadLetter;
      scores.push(letter.deadAtMs, flat[i]!);
    }
    if (scores.length > 0) await client.zadd(deadAt, ...scores);
    cursor = next;
  } while (cursor !== '0');
  await client.pexpire(dead, limits.deadLetterRetentionMs);
  await client.pexpire(deadAt, limits.deadLetterRetentionMs);
}
