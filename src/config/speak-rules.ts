// The speak endpoints' rules (docs/protocols/speech-service.md sections 3, 6, 7, 10 and 11), in one place so a
// profile's agent voice and a rendered prompt's voice are held to the same ones when configuration
// loads, and the local speech service answers by them too. Each check returns the problem in words,
// or null when there is none.

export type SpeakVersion = 'v1' | 'v2';

/** Encodings both batch speak endpoints name (4.3, 4.4). */
export const SPEAK_ENCODINGS = ['mp3', 'opus', 'flac', 'aac', 'linear16', 'mulaw', 'alaw'] as const;
/** Encodings of the streaming speak paths, and the only ones a phone leg can carry (8). */
export const RAW_SPEAK_ENCODINGS = ['linear16', 'mulaw', 'alaw'] as const;

/** speech-service.md section 10: version 1 speed range, for `lyric-2-*` English and Spanish voices only. */
export const V1_SPEED = Object.freeze({ min: 0.7, max: 1.5 });
/** speech-service.md section 10: version 2 speed range and step. */
export const V2_SPEED = Object.freeze({ min: 0.5, max: 1.5, step: 0.05 });

/** `lyric-2-<voice>-en` or `-es`: the voices version 1 `speed` applies to. */
const SPEED_CAPABLE_LYRIC = /^lyric-2-[a-z0-9-]+-(en|es)$/i;

/** The family a version serves (9.2): `lyric-` on v1, `turn-` on v2. */
export function speakFamily(version: SpeakVersion): 'lyric-' | 'turn-' {
  return version === 'v1' ? 'lyric-' : 'turn-';
}

/**
 * speech-service.md sections 3 and 11: `v1` needs a `lyric-` model and `v2` a `turn-` one; `implied` says the version was
 * not written (a provider without one is `v1`), which the message then explains.
 */
export function speakModelProblem(version: SpeakVersion, model: string, implied = false): string | null {
  const family = speakFamily(version);
  if (model.startsWith(family) && model.length > family.length) return null;
  const because = implied ? ' (the default when version is omitted)' : '';
  const hint = version === 'v1' && model.startsWith('turn-') ? '; set "version": "v2" for turn- voices' : '';
  return `version ${version}${because} needs a ${family} model, got ${JSON.stringify(model)}${hint}`;
}

/** speech-service.md section 10: the speed ranges per version, and which voices take one at all. */
export function speakSpeedProblem(version: SpeakVersion, model: string, speed: unknown): string | null {
  if (typeof speed !== 'number' || !Number.isFinite(speed)) return 'must be a number';
  if (version === 'v1') {
    if (!SPEED_CAPABLE_LYRIC.test(model)) {
      return `version v1 takes a speed only for lyric-2-* English and Spanish voices, not ${JSON.stringify(model)}`;
    }
    if (speed < V1_SPEED.min || speed > V1_SPEED.max) {
      return `must be from ${V1_SPEED.min} to ${V1_SPEED.max} on version v1, got ${speed}`;
    }
    return null;
  }
  const steps = speed / V2_SPEED.step;
  if (speed < V2_SPEED.min || speed > V2_SPEED.max || Math.abs(steps - Math.round(steps)) > 1e-9) {
    return `must be from ${V2_SPEED.min} to ${V2_SPEED.max} in steps of ${V2_SPEED.step} on version v2, got ${speed}`;
  }
  return null;
}
