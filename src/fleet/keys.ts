// The fleet's names in Redis, under the store's REDIS_KEY_PREFIX so a region's fleet (its own
// prefix or database) never sees another's. Each key hashes to its own cluster slot; none is
// touched together with another in one command.
//
//   fleet:live:<instance>   hash callSid → live call JSON    expires: FleetTiming.entryTtlMs after the
//                                                             instance's last heartbeat
//   fleet:instances         sorted set instance → last beat   expires: a day after the last beat;
//                                                             members silent for an hour are pruned
//   fleet:inbox:<instance>  pub/sub channel: controls, pre-warm releases and replies to that instance
//   fleet:events:<callSid>  pub/sub channel: the call's events, for observers on other instances
//   fleet:live-changed      pub/sub channel: an instance's live calls changed (the consoles' feed)
//   fleet:listen:<callSid>  pub/sub channel: a call's audio for listen-in on other instances

export interface FleetKeys {
  liveCalls(instance: string): string;
  instances: string;
  inbox(instance: string): string;
  events(callSid: string): string;
  liveChanged: string;
  listen(callSid: string): string;
}

export function fleetKeys(prefix: string): FleetKeys {
  return {
    liveCalls: (instance) => `${prefix}fleet:live:${instance}`,
    instances: `${prefix}fleet:instances`,
    inbox: (instance) => `${prefix}fleet:inbox:${instance}`,
    events: (callSid) => `${prefix}fleet:events:${callSid}`,
    liveChanged: `${prefix}fleet:live-changed`,
    listen: (callSid) => `${prefix}fleet:listen:${callSid}`,
  };
}

/** How often an instance beats, and how long its entries outlive a missed beat. */
export interface FleetTiming {
  heartbeatMs: number;
  /** A killed instance's calls leave the directory at most this long after its last beat. */
  entryTtlMs: number;
  /** How long a relayed control waits for the call's instance to answer. */
  controlTimeoutMs: number;
}

export const DEFAULT_FLEET_TIMING: Readonly<FleetTiming> = Object.freeze({
  heartbeatMs: 1_000,
  entryTtlMs: 4_000,
  controlTimeoutMs: 5_000,
});

/** Past this an instance is no longer listed in fleet:instances: it was stopped or renamed. */
export const INSTANCE_FORGET_MS = 60 * 60_000;
/** fleet:instances itself expires this long after the last beat of any instance. */
export const INSTANCES_KEY_TTL_MS = 24 * 60 * 60_000;
/** Instances read per listing; a fleet is a handful, this only bounds a corrupted set. */
export const MAX_INSTANCES_LISTED = 1_000;
