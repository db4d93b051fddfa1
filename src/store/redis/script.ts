// Lua scripts run by SHA, loaded on first use: each script is one atomic step on the server.
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

export type RedisScript = ((
  client: Redis,
  keys: readonly string[],
  args: readonly (string | number)[],
) => Promise<unknown>) & {
  /** The script's SHA-1 and text, for a caller that sends it in a pipeline (script-batch.ts). */
  readonly sha: string;
  readonly lua: string;
};

export function redisScript(lua: string): RedisScript {
  const sha = createHash('sha1').update(lua).digest('hex');
  const run = async (client: Redis, keys: readonly string[], args: readonly (string | number)[]) => {
    try {
      return await client.evalsha(sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return client.eval(lua, keys.length, ...keys, ...args);
    }
  };
  return Object.assign(run, { sha, lua });
}
