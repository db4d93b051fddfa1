// The address of a pre-recorded voicemail (`amd.voicemail.audioUrl` of a campaign or of one call):
// a WAV the server fetches once and plays after the beep (src/call/outbound/voicemail-recordings.ts). It is
// kept in the call's context (src/call/outbound/outbound-context.ts), whose size is bounded, so it is kept short.

import { MAX_VOICEMAIL_AUDIO_URL_CHARS } from '../api/campaigns.js';

/** Characters an audio URL may hold: the context it is kept in is bounded too. */
export { MAX_VOICEMAIL_AUDIO_URL_CHARS };

/** What is wrong with `value` as a voicemail's audio URL, or null when it is one. */
export function voicemailAudioUrlProblem(value: unknown): string | null {
  if (typeof value !== 'string' || value.trim() === '') return 'must be an http or https URL';
  if (value.length > MAX_VOICEMAIL_AUDIO_URL_CHARS) {
    return `must be at most ${MAX_VOICEMAIL_AUDIO_URL_CHARS} characters`;
  }
  if (!URL.canParse(value)) return 'must be an http or https URL';
  const { protocol, hostname, username, password } = new URL(value);
  if ((protocol !== 'http:' && protocol !== 'https:') || hostname === '') {
    return 'must be an http or https URL';
  }
  // The URL is logged and stored with the campaign: credentials have no place in it.
  if (username !== '' || password !== '') return 'must not hold a user name or password';
  return null;
}
