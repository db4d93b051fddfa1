// Listen-in on a live call, wherever it runs (docs/console.md, "Listen"): here, a stereo tap on the
// session's audio seam; on another instance of a fleet, the same tap there, its audio relayed over
// the call's listen channel for as long as someone here listens.
import type { MediaFormat } from '../audio/format.js';
import type { CallRegistry } from '../call/registry.js';
import { StereoTap } from '../call/stereo-tap.js';

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
