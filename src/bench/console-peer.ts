// The stand-in peer of `callbridge bench console`: an instance that carries N live calls only in
// the live-call directory. It beats them into Redis every second as an instance does and, at the
// churn, ends some and starts as many, then tells the fleet that its calls changed.
import type { Redis } from 'ioredis';
import type { LiveCall } from '../call/watch/live-call.js';
import type { FleetKeys } from '../fleet/keys.js';

const PEER = 'bench-peer';
/** How long the peer's entry outlives its last beat, as an instance's does. */
const ENTRY_TTL_MS = 4_000;
const TICK_MS = 1_000;

function liveCall(n: number): LiveCall {
  return {
    callSid: `CAbench${String(n).padStart(8, '0')}`,
    carrier: 'twilio',
    direction: n % 2 === 0 ? 'inbound' : 'outbound',
    from: `+1212555${String(n % 10_000).padStart(4, '0')}`,
    to: '+12125550100',
    startedAt: new Date().toISOString(),
    campaign: null,
    instance: PEER,
    region: 'bench',
  };
}

export class StandInPeer {
  /** The calls it carries now. */
  readonly live = new Map<string, LiveCall>();
  /** When each call started by the churn began, to time its arrival in the consoles. */
  readonly startedAtMs = new Map<string, number>();
  #next = 0;
  #timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly redis: Redis,
    private readonly keys: FleetKeys,
    calls: number,
    private readonly churn: number,
  ) {
    for (; this.#next < calls; this.#next++) {
      const call = liveCall(this.#next);
      this.live.set(call.callSid, call);
    }
  }

  /** Writes its calls to the directory and says it is alive. */
  async beat(): Promise<void> {
    const { redis, keys } = this;
    const tx = redis.multi().del(keys.liveCalls(PEER));
    tx.hset(
      keys.liveCalls(PEER),
      Object.fromEntries([...this.live].map(([sid, call]) => [sid, JSON.stringify(call)])),
    );
    tx.pexpire(keys.liveCalls(PEER), ENTRY_TTL_MS);
    tx.zadd(keys.instances, Date.now(), PEER);
    await tx.exec();
  }

  /** Beats every second and churns every second until `stop`. */
  start(): void {
    this.#timers = [
      setInterval(() => void this.beat(), TICK_MS),
      setInterval(() => {
        // One tick a second: `churn` calls end and as many start, then the fleet is told.
        const ending = [...this.live.keys()].slice(0, this.churn);
        for (const sid of ending) this.live.delete(sid);
        for (let i = 0; i < this.churn; i++, this.#next++) {
          const call = liveCall(this.#next);
          this.live.set(call.callSid, call);
          this.startedAtMs.set(call.callSid, Date.now());
        }
        void this.beat().then(() => this.redis.publish(this.keys.liveChanged, PEER));
      }, TICK_MS),
    ];
  }

  stop(): void {
    for (const timer of this.#timers) clearInterval(timer);
    this.#timers = [];
  }
}
