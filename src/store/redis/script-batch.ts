// The webhook gateway's Redis steps, pipelined: every script run asked for while the event loop is
// in one turn (the deliveries that arrived together) goes to Redis in one pipeline, one write and
// one read for the burst instead of a round trip each. Each script stays one atomic step on the
// server and each caller's promise settles with its own reply, once Redis has run it.
import type { Redis } from 'ioredis';
import type { RedisScript } from './script.js';

interface Pending {
  script: RedisScript;
  keys: readonly string[];
  args: readonly (string | number)[];
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

export type ScriptBatch = (
  script: RedisScript,
  keys: readonly string[],
  args: readonly (string | number)[],
) => Promise<unknown>;

const isNoScript = (err: unknown) => err instanceof Error && err.message.startsWith('NOSCRIPT');

export function scriptBatch(client: Redis): ScriptBatch {
  let pending: Pending[] = [];
  let scheduled = false;

  const flush = async () => {
    scheduled = false;
    const batch = pending;
    pending = [];
    const [only] = batch;
    if (batch.length === 1 && only) {
      // Alone in its turn: a plain call costs less than a pipeline of one.
      only.script(client, only.keys, only.args).then(only.resolve, only.reject);
      return;
    }
    const pipeline = client.pipeline();
    for (const item of batch) pipeline.evalsha(item.script.sha, item.keys.length, ...item.keys, ...item.args);
    let replies: [Error | null, unknown][] | null;
    try {
      replies = await pipeline.exec();
    } catch (err) {
      for (const item of batch) item.reject(err);
      return;
    }
    batch.forEach((item, i) => {
      const [err, value] = replies?.[i] ?? [
        new Error('Redis returned no reply for a pipelined script'),
        null,
      ];
      // Not loaded yet (a fresh or flushed Redis): the script's own call loads it.
      if (isNoScript(err)) item.script(client, item.keys, item.args).then(item.resolve, item.reject);
      else if (err) item.reject(err);
      else item.resolve(value);
    });
  };

  return (script, keys, args) =>
    new Promise((resolve, reject) => {
      pending.push({ script, keys, args, resolve, reject });
      if (!scheduled) {
        scheduled = true;
        // After the I/O callbacks of this turn: every delivery read in it joins the pipeline.
        setImmediate(() => void flush());
      }
    });
}
