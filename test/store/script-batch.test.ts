// The webhook gateway's Redis steps of one turn go to Redis in one pipeline, each caller getting its
// own reply, a script Redis has not loaded yet still runs, and a failure reaches every caller.
// Needs the test Redis (REDIS_URL); skipped, saying why, without it.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { scriptBatch } from '../../src/store/redis/script-batch.js';
import { redisScript } from '../../src/store/redis/script.js';
import { deleteKeys, REDIS_URL, redisAvailable } from '../helpers/redis.js';

const available = await redisAvailable();
if (!available) console.warn(`skipping the script batch suite: no Redis answers at ${REDIS_URL}`);

describe.skipIf(!available)('redis script batch', () => {
  const prefix = `callbridge-test:${randomUUID()}:`;
  let client: Redis;
  beforeAll(() => {
    client = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    await client.quit();
    await deleteKeys(prefix);
  });

  // A script text no other run has loaded: its SHA is unknown to Redis until this suite runs it.
  const incrementBy = () => redisScript(`-- ${randomUUID()}\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])`);

  it('sends the runs of one turn in one pipeline and settles each with its own reply', async () => {
    const script = incrementBy();
    await script(client, [`${prefix}warm`], [0]);
    const batch = scriptBatch(client);
    const pipeline = vi.spyOn(client, 'pipeline');
    try {
      const replies = await Promise.all([1, 2, 3].map((n) => batch(script, [`${prefix}n${n}`], [n])));
      expect(replies).toEqual([1, 2, 3]);
      expect(pipeline).toHaveBeenCalledTimes(1);
    } finally {
      pipeline.mockRestore();
    }
  });

  it('runs a script Redis has not loaded yet', async () => {
    const batch = scriptBatch(client);
    const script = incrementBy();
    const replies = await Promise.all([
      batch(script, [`${prefix}fresh`], [5]),
      batch(script, [`${prefix}fresh`], [5]),
    ]);
    expect(new Set(replies)).toEqual(new Set([5, 10]));
  });

  it('rejects a run whose script fails, and only that one', async () => {
    const batch = scriptBatch(client);
    const failing = redisScript(`-- ${randomUUID()}\nreturn redis.error_reply('refused')`);
    const script = incrementBy();
    const results = await Promise.allSettled([
      batch(script, [`${prefix}ok`], [1]),
      batch(failing, [`${prefix}bad`], []),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
  });
});
