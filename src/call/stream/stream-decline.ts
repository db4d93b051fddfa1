// A stream this instance cannot take (draining, at capacity, the shared store away) still reaches
// a person: the caller hears the decline message in the stream's own format, cut and paced to the
// carrier's downlink rules, before the line is hung up. No agent session is spent on it.
import { bytesPerMs, type MediaFormat, silenceByte } from '../../audio/format.js';
import type { CarrierAdapter, DownlinkRules } from '../carrier-port.js';
import { type Clock, realClock, sleep } from '../clock.js';
import { prewarmKey } from '../intake/prewarm.js';
import { fallbackAudio } from '../session/fallback-audio.js';
import type { StreamStart } from './admit.js';
import type { CarrierLeg } from './carrier-leg.js';
import type { MediaSocketDeps } from './deps.js';

/** Past its own length, how long the message is given to be played before the hang-up. */
const PLAYOUT_SLACK_MS = 500;

/** The message cut into the carrier's messages: whole frames, within its size bounds, padded with silence. */
export function declineMessages(audio: Buffer, rules: DownlinkRules, format: MediaFormat): Buffer[] {
  const frame = rules.frameBytes;
  let size = Math.max(frame, rules.minMessageBytes ?? 0);
  if (rules.maxMessageBytes !== undefined) size = Math.min(size, rules.maxMessageBytes);
  size = Math.max(frame, Math.floor(size / frame) * frame);
  const messages: Buffer[] = [];
  for (let at = 0; at < audio.length; at += size) {
    const chunk = audio.subarray(at, at + size);
    if (chunk.length === size) {
      messages.push(Buffer.from(chunk));
    } else {
      const padded = Buffer.alloc(size, silenceByte(format.encoding));
      chunk.copy(padded);
      messages.push(padded);
    }
  }
  return messages;
}

export interface DeclinePlayback {
  audio: Buffer | null;
  rules: DownlinkRules;
  format: MediaFormat;
  /** Sends one message of caller-bound audio; false once the stream is gone. */
  send(payload: Buffer): boolean;
  clock?: Clock;
}

/** Plays the message in real time (a carrier's queue is never flooded), then resolves. */
export async function playDecline(playback: DeclinePlayback): Promise<void> {
  const clock = playback.clock ?? realClock;
  if (!playback.audio || playback.audio.length === 0) return;
  const perMs = bytesPerMs(playback.format);
  const started = clock.now();
  let sentMs = 0;
  for (const message of declineMessages(playback.audio, playback.rules, playback.format)) {
    if (!playback.send(message)) return;
    sentMs += message.length / perMs;
    // Keep at most one message ahead of real time.
    const ahead = sentMs - (clock.now() - started);
    if (ahead > message.length / perMs) await sleep(clock, ahead - message.length / perMs);
  }
  await sleep(clock, Math.max(0, sentMs - (clock.now() - started)) + PLAYOUT_SLACK_MS);
}

/**
 * Declines a stream this instance cannot carry now: the caller hears the decline message, then the
 * line is hung up. No agent is dialed, and one pre-warmed here for the call is closed.
 */
export function declineStream(
  start: StreamStart,
  adapter: CarrierAdapter,
  leg: CarrierLeg,
  deps: Pick<MediaSocketDeps, 'pending' | 'prewarm' | 'prompts'>,
): void {
  const key = prewarmKey(adapter.name, start.callSid);
  deps.pending?.settled(key);
  deps.prewarm.take(key)?.close();
  const format = start.mediaFormat;
  const audio = deps.prompts
    ? deps.prompts('at_capacity', format).catch(() => fallbackAudio(undefined, format))
    : Promise.resolve(fallbackAudio(undefined, format));
  void audio
    .then((message) =>
      playDecline({
        audio: message,
        rules: adapter.downlink(format),
        format,
        send: (payload) => {
          if (!leg.open) return false;
          leg.sendAudio(payload);
          return true;
        },
      }),
    )
    .finally(() => leg.hangup());
}
