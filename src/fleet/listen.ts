// Listen-in on a live call, wherever it runs (docs/console.md, "Listen"): here, a stereo tap on the
// session's audio seam; on another instance of a fleet, the same tap there, its audio relayed over
// the call's listen channel for as long as someone here listens.
import type { Redis } from 'ioredis';
import type { MediaFormat } from '../audio/format.js';
import type { CallRegistry } from '../call/watch/registry.js';
import { StereoTap } from '../call/watch/stereo-tap.js';
import type { FleetKeys } from './keys.js';

export interface ListenSink {
  /** Interleaved stereo PCM16 little-endian: left the caller, right what the caller heard. */
  audio(pcm: Buffer): void;
  /** The call ended (or the audio stopped reaching here): nothing more will come. */
  end(): void;
}

export interface Listening {
  sampleRate: number;
  stop(): void;
}

export interface CallListening {
  /** Whether the call is live anywhere this instance can listen to. */
  canListen(callSid: string): Promise<boolean>;
  /** Starts listening; null when the call is not live (any more). */
  listen(callSid: string, sink: ListenSink): Promise<Listening | null>;
}

/** Listening to the calls this instance carries. */
export function localListening(registry: CallRegistry): CallListening & {
  listenHere(callSid: string, sink: ListenSink): Listening | null;
} {
  const listenHere = (callSid: string, sink: ListenSink): Listening | null => {
    const session = registry.get(callSid);
    if (!session || session.isEnding) return null;
    const format: MediaFormat = session.info.mediaFormat;
    let ended = false;
    const finish = () => {
      if (ended) return;
      ended = true;
      unlisten();
      unwatch();
      sink.end();
    };
    const unlisten = session.listen(new StereoTap(format, (pcm) => sink.audio(pcm)));
    const unwatch = registry.watch((change, gone) => {
      if (change === 'removed' && gone === session) finish();
    });
    return {
      sampleRate: format.sampleRate,
      stop() {
        ended = true;
        unlisten();
        unwatch();
      },
    };
  };
  return {
    listenHere,
    canListen: async (callSid) => {
      const session = registry.get(callSid);
      return session !== undefined && !session.isEnding;
    },
    listen: async (callSid, sink) => listenHere(callSid, sink),
  };
}

/** What marks the end of a call's relayed audio (audio is whole stereo samples, 4 bytes each). */
const END_MARK = Buffer.from('end');
/** The tapping instance's first message: `rate:<sample rate>` (odd length, never audio). */
const RATE_PREFIX = 'rate:';
/** How long a listener waits for the call's instance to start relaying. */
const RELAY_START_TIMEOUT_MS = 3_000;

export interface FleetListeningDeps {
  local: ReturnType<typeof localListening>;
  commands: Redis;
  subscriber: Redis;
  keys: FleetKeys;
  /** The instance carrying the call, per the live-call directory; null when none does. */
  ownerOf(callSid: string): Promise<string | null>;
  /** Asks the call's instance to relay its audio on the call's listen channel. */
  ask(instance: string, callSid: string): Promise<void>;
}

/**
 * Listening across a fleet: a call carried here is tapped here; one carried elsewhere is tapped
 * there, its audio published on the call's listen channel while anyone listens (the tap stops when
 * a publish reaches nobody) and the end marked when the call ends.
 */
export function fleetListening(deps: FleetListeningDeps): CallListening & {
  relayFrom(callSid: string): void;
} {
  const sinks = new Map<string, Set<ListenSink>>();
  const rates = new Map<string, (rate: number) => void>();
  const relaying = new Set<string>();
  deps.subscriber.on('messageBuffer', (raw: Buffer, message: Buffer) => {
    const channel = raw.toString();
    const listeners = sinks.get(channel);
    if (!listeners) return;
    if (message.length % 2 === 1 && message.subarray(0, RATE_PREFIX.length).toString() === RATE_PREFIX) {
      rates.get(channel)?.(Number(message.subarray(RATE_PREFIX.length).toString()));
      return;
    }
    const ended = message.equals(END_MARK);
    for (const sink of [...listeners]) {
      if (ended) sink.end();
      else sink.audio(message);
    }
  });
  return {
    canListen: async (callSid) =>
      (await deps.local.canListen(callSid)) || (await deps.ownerOf(callSid)) !== null,
    async listen(callSid, sink) {
      const here = deps.local.listenHere(callSid, sink);
      if (here) return here;
      const owner = await deps.ownerOf(callSid);
      if (!owner) return null;
      const channel = deps.keys.listen(callSid);
      let set = sinks.get(channel);
      if (!set) {
        set = new Set();
        sinks.set(channel, set);
        await deps.subscriber.subscribe(channel);
      }
      set.add(sink);
      const listeners = set;
      const stop = () => {
        listeners.delete(sink);
        if (listeners.size > 0 || sinks.get(channel) !== listeners) return;
        sinks.delete(channel);
        deps.subscriber.unsubscribe(channel).catch(() => {});
      };
      let timer: NodeJS.Timeout | undefined;
      const rate = new Promise<number | null>((resolve) => {
        rates.set(channel, resolve);
        timer = setTimeout(() => resolve(null), RELAY_START_TIMEOUT_MS);
      });
      await deps.ask(owner, callSid);
      const sampleRate = await rate;
      clearTimeout(timer);
      rates.delete(channel);
      if (sampleRate === null || !Number.isFinite(sampleRate)) {
        stop();
        return null;
      }
      return { sampleRate, stop };
    },
    /** Another instance asked: tap the call here and publish its audio until nobody listens. */
    relayFrom(callSid) {
      if (relaying.has(callSid)) return;
      const channel = deps.keys.listen(callSid);
      let listening: Listening | null = null;
      const stop = () => {
        relaying.delete(callSid);
        listening?.stop();
      };
      const tapped = deps.local.listenHere(callSid, {
        audio(pcm) {
          deps.commands.publish(channel, pcm).then(
            (receivers) => {
              if (receivers === 0) stop();
            },
            () => stop(),
          );
        },
        end() {
          relaying.delete(callSid);
          deps.commands.publish(channel, END_MARK).catch(() => {});
        },
      });
      listening = tapped;
      if (!tapped) {
        void deps.commands.publish(channel, END_MARK).catch(() => {});
        return;
      }
      relaying.add(callSid);
      // Odd length (`rate:8000` is 9 bytes), so it can never be taken for audio.
      const rate = `${RATE_PREFIX}${tapped.sampleRate}`;
      void deps.commands.publish(channel, rate.length % 2 === 1 ? rate : `${rate} `).catch(() => {});
    },
  };
}
