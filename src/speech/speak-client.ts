// Renders text with the batch speak endpoints (docs/protocols/speech-service.md sections 6, 7 and 11):
// `lyric-` voices on `POST /v1/speak`, `turn-` voices on `POST /v2/speak`, body `{"text": …}`.
//
// The query names only what the reference names: `model`, `encoding` (the phone leg's), `container=wav`,
// and `speed` when the voice has one. It names no sample-rate parameter for either endpoint,
// so none is sent: the WAV header of the answer says the rate the service chose, and the audio is
// resampled here to the rate the phone leg needs. Raw output would leave that rate a guess.
import { type AudioFormat, encodeAudio } from '../audio/codec.js';
import { readWav, resampleAny, WavFormatError } from '../audio/wav.js';
import type { PromptVoice } from '../config/prompts.js';
import { SpeechServiceError } from '../errors.js';
import { type SpeechApi, speechRequest } from './http.js';

/** A minute of 48 kHz 16-bit audio: far past any prompt. */
const MAX_AUDIO_BYTES = 6 * 1024 * 1024;

export function speakPath(voice: PromptVoice): '/v1/speak' | '/v2/speak' {
  return voice.version === 'v1' ? '/v1/speak' : '/v2/speak';
}

/** The speak query for `voice` in `format` (named parameters only, see above). */
export function speakQuery(voice: PromptVoice, format: AudioFormat): Record<string, string> {
  const query: Record<string, string> = { model: voice.model, encoding: format.encoding, container: 'wav' };
  if (voice.speed !== undefined) query.speed = String(voice.speed);
  return query;
}

/** Raw audio of `text` in `format`, or a SpeechServiceError saying whether to try again later. */
export async function renderSpeech(
  api: SpeechApi,
  input: { text: string; voice: PromptVoice; format: AudioFormat },
): Promise<Buffer> {
  const path = speakPath(input.voice);
  const answer = await speechRequest(api, {
    method: 'POST',
    path,
    query: speakQuery(input.voice, input.format),
    json: { text: input.text },
    accept: 'audio/wav',
    maxBytes: MAX_AUDIO_BYTES,
  });
  let wav;
  try {
    wav = readWav(answer.body);
  } catch (err) {
    const why = err instanceof WavFormatError ? err.message : 'unreadable audio';
    throw new SpeechServiceError(`POST ${path}: the answer is not the WAV asked for (${why})`, {
      retryable: false,
    });
  }
  if (wav.samples.length === 0) {
    throw new SpeechServiceError(`POST ${path}: the answer holds no audio`, { retryable: false });
  }
  return encodeAudio(
    resampleAny(wav.samples, wav.sampleRate, input.format.sampleRate),
    input.format.encoding,
  );
}
