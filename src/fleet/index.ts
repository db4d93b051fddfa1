// What several instances share at run time (docs/architecture.md section 8). With REDIS_URL: the
// live-call directory with heartbeats, controls and event feeds relayed to the instance carrying
// the call, and the release of agents pre-warmed for streams that landed on another instance.
// Without it: this instance's own registry and event hub, and nothing to release.
import type { Logger } from 'pino';
import type { CallEventFeed, CallEventHub } from '../call/watch/events.js';
import type { LiveCalls } from '../call/watch/live-call.js';
import type { ForeignStream } from '../call/stream/media-socket.js';
import type { PendingStreams } from '../call/intake/pending-streams.js';
import type { PrewarmedAgent, PrewarmPool } from '../call/intake/prewarm.js';
import type { CallRegistry } from '../call/watch/registry.js';
import type { Config } from '../config/types.js';
import type { Metrics } from '../metrics/metrics.js';
import { DEFAULT_REDIS_KEY_PREFIX } from '../store/redis.js';
import { fleetLiveCalls } from './fleet-calls.js';
import { fleetInbox } from './inbox.js';
import { DEFAULT_FLEET_TIMING, type FleetTiming, fleetKeys } from './keys.js';
import { LiveDirectory } from './live-directory.js';
import { type CallListening, fleetListening, localListening } from './listen.js';
import { LiveFeed } from './live-feed.js';
import { type LocalCallsDeps, localLiveCalls } from './local-calls.js';
import { connectFleetRedis } from './redis-clients.js';
import { FleetRelay } from './relay.js';

/** A followed live-calls feed reads the directory at least this often, and at most once per change burst. */
const LIVE_REFRESH_MS = 2_000;
const LIVE_COALESCE_MS = 100;

export interface FleetDeps {
  config: Pick<Config, 'instanceId' | 'region' | 'redisUrl' | 'redisKeyPrefix'>;
  registry: CallRegistry;
  events: CallEventHub;
  prewarm: PrewarmPool<PrewarmedAgent>;
  pending: PendingStreams;
  metrics: Metrics;
  /** Pauses or resumes the recording of a call carried here. */
  recording?: LocalCallsDeps['recording'];
  logger: Logger;
  timing?: Partial<FleetTiming>;
}

export interface Fleet {
  /** Live calls to list and control: the whole fleet's with Redis, this instance's without. */
  calls: LiveCalls;
  /** Where observers here follow a call, whichever instance carries it. */
  feed: CallEventFeed;
  /** Tells the instance that prepared a call whose stream landed here to close its pre-warmed agent. */
  releaseRemotePrewarm(stream: ForeignStream): void;
  /** Whether the shared store answers; new calls are declined while it does not. */
  storeReachable(): boolean;
  /** The live calls of the whole deployment as they start, change and end (one per instance). */
  live: LiveFeed;
  /** Listen-in on a live call. */
  listening: CallListening;
  /** A peer ready for new calls, where a draining instance prepares them; null without one. */
  readyPeer(): string | null;
  /** This instance drains: its peers learn it is no longer ready at once, not at the next beat. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

/** One instance alone: its own registry and event hub, no peer to tell or ask. */
function localFleet(registry: CallRegistry, events: CallEventHub, local: LiveCalls): Fleet {
  const live = new LiveFeed({
    list: local.list,
    refreshEveryMs: LIVE_REFRESH_MS,
    coalesceMs: LIVE_COALESCE_MS,
  });
  const unwatchLocal = registry.watch(() => live.changed());
  return {
    calls: local,
    live,
    listening: localListening(registry),
    feed: events,
    releaseRemotePrewarm: () => {},
    storeReachable: () => true,
    readyPeer: () => null,
    drain: async () => {},
    close: async () => {
      unwatchLocal();
      live.close();
    },
  };
}

/** A call's events for observers here: from this instance's hub and, relayed, from its carrier's. */
function fleetFeed(events: CallEventHub, relay: FleetRelay): CallEventFeed {
  return {
    subscribe(callSid, listener) {
      const here = events.subscribe(callSid, listener);
      const elsewhere = relay.followEvents(callSid, listener);
      return () => {
        here();
        elsewhere();
      };
    },
    following: (callSid) => relay.following(callSid),
  };
}

export async function startFleet(deps: FleetDeps): Promise<Fleet> {
  const { config, registry, events } = deps;
  const local = localLiveCalls({
    registry,
    instance: config.instanceId,
    region: config.region,
    ...(deps.recording ? { recording: deps.recording } : {}),
  });
  if (!config.redisUrl) return localFleet(registry, events, local);

  const timing: FleetTiming = { ...DEFAULT_FLEET_TIMING, ...deps.timing };
  const keys = fleetKeys(config.redisKeyPrefix ?? DEFAULT_REDIS_KEY_PREFIX);
  const logger = deps.logger.child({ component: 'fleet' });
  const redis = await connectFleetRedis(config.redisUrl);
  let draining = false;
  const directory = new LiveDirectory({
    redis: redis.commands,
    keys,
    instance: config.instanceId,
    timing,
    localCalls: local.listNow,
    isReady: () => !draining,
    logger,
  });
  const listening = fleetListening({
    local: localListening(registry),
    commands: redis.commands,
    subscriber: redis.subscriber,
    keys,
    ownerOf: async (callSid) => {
      const entry = (await directory.list()).find((call) => call.callSid === callSid);
      return entry && entry.instance !== config.instanceId ? entry.instance : null;
    },
    ask: (instance, callSid) => relay.tell(instance, { type: 'listen', callSid }),
  });
  const relay = new FleetRelay({
    commands: redis.commands,
    subscriber: redis.subscriber,
    keys,
    instance: config.instanceId,
    logger,
    onMessage: fleetInbox({
      local,
      prewarm: deps.prewarm,
      pending: deps.pending,
      metrics: deps.metrics,
      relayListening: (callSid) => listening.relayFrom(callSid),
      logger,
    }),
  });
  try {
    await relay.start();
    await directory.start();
  } catch (err) {
    await redis.close();
    throw err;
  }
  const live = new LiveFeed({
    list: () => directory.list(),
    refreshEveryMs: Math.max(LIVE_REFRESH_MS, timing.heartbeatMs),
    coalesceMs: LIVE_COALESCE_MS,
    onError: (err) => logger.warn({ err: err.message }, 'the live-calls feed cannot read the directory'),
  });
  // Every instance says when its calls changed; consoles here then read the directory once.
  redis.subscriber.on('message', (channel: string) => {
    if (channel === keys.liveChanged) live.changed();
  });
  await redis.subscriber.subscribe(keys.liveChanged);
  // The directory follows calls as they start and end, between beats too.
  const unwatch = registry.watch(() => {
    void directory.beat().then(() =>
      redis.commands.publish(keys.liveChanged, config.instanceId).catch(() => {
        // Redis away: consoles elsewhere see the change at their next refresh.
      }),
    );
  });
  // Every event of a call carried here goes out on the call's channel, for observers elsewhere.
  const untap = events.tap((callSid, event) => relay.publishEvent(callSid, event));

  return {
    calls: fleetLiveCalls({
      local,
      directory,
      relay,
      instance: config.instanceId,
      controlTimeoutMs: timing.controlTimeoutMs,
    }),
    feed: fleetFeed(events, relay),
    releaseRemotePrewarm(stream) {
      relay
        .tell(stream.instance, { type: 'release_prewarm', carrier: stream.carrier, callSid: stream.callSid })
        .catch((err: Error) =>
          logger.warn(
            { err: err.message, instance: stream.instance },
            'could not release a pre-warmed agent elsewhere',
          ),
        );
    },
    storeReachable: () => directory.healthy && redis.commands.status === 'ready',
    live,
    listening,
    readyPeer: () => directory.readyPeer(),
    async drain() {
      draining = true;
      await directory.beat();
    },
    async close() {
      unwatch();
      live.close();
      untap();
      relay.close();
      await directory.stop();
      await redis.close();
    },
  };
}
