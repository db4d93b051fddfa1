// A throwaway redis-server of the test's own, on a free port, with no persistence: for tests that
// stop, freeze or kill Redis, and for proving the store's keys on a server in cluster mode (one
// node owning every slot refuses any command, transaction or script whose keys span slots, as a
// real cluster does).
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { findBinary } from './binaries.js';
import { freePort } from './free-port.js';

export const REDIS_SERVER = findBinary('redis-server');

export interface RedisServer {
  url: string;
  port: number;
  /** SIGKILL: the server is gone at once, connections reset. */
  kill(): Promise<void>;
  /** SIGSTOP / SIGCONT: the server holds its connections but answers nothing. */
  freeze(): void;
  thaw(): void;
  /** Starts the server again on the same port (after kill). */
  restart(): Promise<void>;
  /** Stops the server and removes its folder. */
  stop(): Promise<void>;
}

export async function startRedisServer(opts: { cluster?: boolean } = {}): Promise<RedisServer> {
  if (!REDIS_SERVER) throw new Error('redis-server not found');
  const dir = mkdtempSync(join(tmpdir(), 'callbridge-redis-'));
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | null = null;

  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  args.push('--dir', dir);
  if (opts.cluster) args.push('--cluster-enabled', 'yes', '--cluster-config-file', join(dir, 'nodes.conf'));

  async function launch(): Promise<void> {
    const started = spawn(REDIS_SERVER!, args, { stdio: 'ignore' });
    child = started;
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (started.exitCode !== null) throw new Error(`redis-server exited with ${started.exitCode}`);
      if (await answers(url)) break;
      if (Date.now() > deadline) throw new Error(`redis-server did not answer on ${url}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    if (opts.cluster) await ownEverySlot(url);
  }

  async function kill(): Promise<void> {
    const running = child;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = once(running, 'exit');
    running.kill('SIGCONT');
    running.kill('SIGKILL');
    await exited;
  }

  await launch();
  return {
    url,
    port,
    kill,
    freeze: () => child?.kill('SIGSTOP'),
    thaw: () => child?.kill('SIGCONT'),
    restart: launch,
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function answers(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/** A one-node cluster: the node takes all 16384 slots and waits for the cluster to say ok. */
async function ownEverySlot(url: string): Promise<void> {
  const client = new Redis(url);
  try {
    await client.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383');
    const deadline = Date.now() + 10_000;
    while (!String(await client.call('CLUSTER', 'INFO')).includes('cluster_state:ok')) {
      if (Date.now() > deadline) throw new Error('the one-node cluster did not become ok');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    client.disconnect();
  }
}
