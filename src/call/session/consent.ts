// The consent prompt of a recorded call (docs/recordings.md): played to the caller before the agent
// speaks, and so the first thing on the recording's right channel. Text is rendered as a voicemail's
// text is (the prompt player); an audio URL is fetched as a voicemail recording is. The agent waits
// until the prompt was heard (bounded), so it cannot speak over it.
import type { Logger } from 'pino';
import type { MediaFormat } from '../../audio/format.js';
import type { RecordingConsent } from '../../config/recording.js';
import type { Downlink } from '../downlink/downlink.js';
import type { PromptPlayer } from './fallback-audio.js';
import type { VoicemailRecordingSource } from '../outbound/voicemail-recordings.js';

/** How long past its own length the prompt may take to be confirmed heard. */
const CONSENT_SLACK_MS = 3_000;

export interface ConsentDeps {
  format: MediaFormat;
  downlink: Pick<Downlink, 'play' | 'untilHeard' | 'pendingMs'>;
  prompts?: PromptPlayer;
  voicemailRecordings?: VoicemailRecordingSource;
  logger: Logger;
  /** The prompt starts playing (its audio was found): the call's transcript gets it as a turn. */
  onPlay?(text: string): void;
}

/** What the transcript says of a consent prompt played from a recording (its words are not known). */
export const RECORDED_CONSENT_TEXT = '(the recording consent prompt, from its audio file)';

/** The prompt as audio in the stream's format, or why there is none. */
export async function consentAudio(
  consent: NonNullable<RecordingConsent>,
  deps: Omit<ConsentDeps, 'downlink'>,
): Promise<{ audio: Buffer } | { problem: string }> {
  if ('audioUrl' in consent) {
    if (!deps.voicemailRecordings) return { problem: 'this server fetches no recordings' };
    return deps.voicemailRecordings(consent.audioUrl, deps.format);
  }
  try {
    const audio =
      (await deps.prompts?.('voicemail', deps.format, { text: consent.text, localVoice: true })) ?? null;
    return audio ? { audio } : { problem: 'prompts are not rendered here (config/prompts.json)' };
  } catch (err) {
    return { problem: `the prompt could not be rendered: ${(err as Error).message}` };
  }
}

/** Plays the prompt and waits until it was heard; false when it could not be played at all. */
export async function playConsent(
  consent: NonNullable<RecordingConsent>,
  deps: ConsentDeps,
): Promise<boolean> {
  const found = await consentAudio(consent, deps);
  if ('problem' in found) {
    deps.logger.warn({ problem: found.problem }, 'the recording consent prompt cannot be played');
    return false;
  }
  deps.onPlay?.('text' in consent ? consent.text : RECORDED_CONSENT_TEXT);
  deps.downlink.play(found.audio);
  await deps.downlink.untilHeard(deps.downlink.pendingMs() + CONSENT_SLACK_MS);
  return true;
}
