// The live-call directory in Redis (docs/architecture.md section 8): each instance keeps a hash of
// its live calls, rewritten on every heartbeat and whenever a call starts or ends, and set to
// expire a few beats later. An instance that stops beating (killed, cut off) leaves the directory
// when its hash expires, on Redis's own clock, whatever the instances' clocks say.
//
// Each beat also says whether the instance is ready for new calls (not draining), and reads which
// peers are: a draining instance prepares a new call on one of them (`readyPeer`), so a deploy
// refuses no call (docs/deploy.md).
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { LiveCall } from '../call/watch/live-call.js';
import { CoalescedRun } from './coalesced-run.js';
import {
  type FleetKeys,
  type FleetTiming,
  INSTANCE_FORGET_MS,
  INSTANCES_KEY_TTL_MS,
  MAX_INSTANCES_LISTED,
} from './keys.js';

export interface LiveDirectoryDeps {
  redis: Redis;
  keys: FleetKeys;
  instance: string;
  timing: FleetTiming;
  /** This instance's live calls now. */
  localCalls(): LiveCall[];
  /** Whether this instance takes new calls (false once it drains). */
  isReady(): boolean;
  logger: Logger;
  now?: () => number;
}

export class LiveDirectory {
  readonly #deps: LiveDirectoryDeps;
  readonly #now: () => number;
  #timer: ReturnType<typeof setInterval> | null = null;
  /** Whether the last write reached Redis: the fleet's view of whether the shared store answers. */
  #healthy = true;
  readonly #writes = new CoalescedRun(() => this.#write());
  /** Peers whose last beat, within an entry's lifetime, said they were ready. */
  #readyPeers: string[] = [];
  #nextPeer = 0;

  constructor(deps: LiveDirectoryDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
  }

  get healthy(): boolean {
    return this.#healthy;
  }

  /** Beats now, then every heartbeat. */
  async start(): Promise<void> {
    await this.beat();
    this.#timer = setInterval(() => void this.beat(), this.#deps.timing.heartbeatMs);
    this.#timer.unref();
  }

  /**
   * Writes this instance's calls now. Beats never overlap: one asked for while another is in
   * flight runs right after it, with the calls as they are then.
   */
  beat(): Promise<void> {
    return this.#writes.run();
  }

  async #write(): Promise<void> {
    const { redis, keys, instance, timing } = this.#deps;
    const key = keys.liveCalls(instance);
    const calls = this.#deps.localCalls();
    const now = this.#now();
    const tx = redis.multi().del(key);
    if (calls.length > 0) {
      tx.hset(key, Object.fromEntries(calls.map((call) => [call.callSid, JSON.stringify(call)])));
      tx.pexpire(key, timing.entryTtlMs);
    }
    try {
      await tx.exec();
      await redis
        .multi()
        .zadd(keys.instances, now, instance)
        .zremrangebyscore(keys.instances, '-inf', now - INSTANCE_FORGET_MS)
        .pexpire(keys.instances, INSTANCES_KEY_TTL_MS)
        .exec();
      const ready = this.#deps.isReady()
        ? redis.zadd(keys.ready, now, instance)
        : redis.zrem(keys.ready, instance);
      await ready;
      await redis.pexpire(keys.ready, INSTANCES_KEY_TTL_MS);
      const peers = await redis.zrangebyscore(keys.ready, now - timing.entryTtlMs, '+inf');
      this.#readyPeers = peers.filter((name) => name !== instance);
      if (!this.#healthy) this.#deps.logger.info('Redis answers again: the live-call directory is current');
      this.#healthy = true;
    } catch (err) {
      if (this.#healthy) {
        this.#deps.logger.error(
          { err: (err as Error).message },
          'Redis does not answer: live calls go on, new calls are declined until it is back',
        );
      }
      this.#healthy = false;
      this.#readyPeers = [];
    }
  }

  /** A peer ready for new calls as of the last beat, taking turns among them; null when none is. */
  readyPeer(): string | null {
    if (this.#readyPeers.length === 0) return null;
    this.#nextPeer = (this.#nextPeer + 1) % this.#readyPeers.length;
    return this.#readyPeers[this.#nextPeer] ?? null;
  }

  /** Every live call of every instance beating into this Redis. */
  async list(): Promise<LiveCall[]> {
    const { redis, keys } = this.#deps;
    const instances = await redis.zrange(keys.instances, 0, MAX_INSTANCES_LISTED - 1);
    if (instances.length === 0) return [];
    const pipeline = redis.pipeline();
    for (const name of instances) pipeline.hvals(keys.liveCalls(name));
    const results = (await pipeline.exec()) ?? [];
    const calls: LiveCall[] = [];
    for (const [err, values] of results) {
      if (err) throw err;
      for (const text of values as string[]) {
        const call = parseLiveCall(text);
        if (call) calls.push(call);
      }
    }
    return calls.sort((a, b) => a.startedAt.localeCompare(b.startedAt) || a.callSid.localeCompare(b.callSid));
  }

  /** Stops beating and takes this instance's calls out of the directory at once. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#writes.inFlight;
    const { redis, keys, instance } = this.#deps;
    await redis.del(keys.liveCalls(instance)).catch(() => {});
    await redis.zrem(keys.ready, instance).catch(() => {});
  }
}

function parseLiveCall(text: string): LiveCall | null {
  try {
    const value = JSON.parse(text) as LiveCall;
    return typeof value === 'object' && value !== null && typeof value.callSid === 'string' ? value : null;
  } catch {
    return null;
  }
}
