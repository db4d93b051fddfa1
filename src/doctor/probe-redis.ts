// Reachability of Redis (REDIS_URL): one connection, one PING, no retries, closed again.
import { maskUrlCredentials } from '../config/urls.js';
import { createRedisClient } from '../store/redis-client.js';
import { describeNetworkError } from './network-error.js';
import { type CheckLine, fail, ok } from './report.js';

export async function probeRedis(url: string, timeoutMs: number): Promise<CheckLine> {
  const subject = `Redis ${maskUrlCredentials(url)}`;
  // The socket's own error (ECONNREFUSED…) arrives as an event; the awaited call then only says
  // "Connection is closed".
  let socketError: unknown;
  const client = createRedisClient(url, {
    connectTimeoutMs: timeoutMs,
    commandTimeoutMs: timeoutMs,
    retriesPerRequest: 0,
    queueWhileOffline: false,
    maxReconnectDelayMs: null,
    onError: (err) => {
      socketError = err;
    },
  });
  const ping = (async () => {
    await client.connect();
    return client.ping();
  })();
  let timer: NodeJS.Timeout | undefined;
  // One deadline over connect, handshake and PING: a host that accepts and then stays silent
  // must not hold the check.
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), timeoutMs);
  });
  try {
    const answer = await Promise.race([ping, deadline]);
    return answer === 'PONG' ? ok(`${subject}: answers PING`) : fail(`${subject}: PING answered ${answer}`);
  } catch (err) {
    return fail(`${subject}: ${describeRedisError(socketError ?? err, timeoutMs)}`);
  } finally {
    clearTimeout(timer);
    ping.catch(() => {});
    client.disconnect();
  }
}

function describeRedisError(err: unknown, timeoutMs: number): string {
  const message = err instanceof Error ? err.message : String(err);
  // ioredis reports a timed-out connect or command in words of its own.
  if (/timed? ?out/i.test(message)) return `no answer within ${timeoutMs} ms`;
  // Server replies (NOAUTH, WRONGPASS…) say what is wrong; they never echo the password.
  if (/^[A-Z]+ /.test(message)) return message;
  return describeNetworkError(err, timeoutMs);
}
