// What callbridge keeps in a Telnyx call's `client_state` (docs/protocols/telnyx.md sections 2
// and 10): Telnyx returns it, base64 as given, on every later webhook of the call and in the
// media stream's `start`. It carries the stream token (one more channel besides the media URL's
// path) and marks a call being declined, so the polite decline needs no state of our own.

export interface ClientState {
  token?: string;
  /** The call is being declined: speak the message once answered, then hang up. */
  decline?: true;
}

/** Longest client_state read back; ours is a few hundred characters. */
const MAX_CLIENT_STATE_CHARS = 8192;
const MAX_TOKEN_CHARS = 4096;

export function encodeClientState(state: ClientState): string {
  return Buffer.from(JSON.stringify({ cb: 1, ...state })).toString('base64');
}

/** Our state, or null for anything else (absent, foreign, too long, not base64 JSON). */
export function decodeClientState(value: unknown): ClientState | null {
  if (typeof value !== 'string' || value === '' || value.length > MAX_CLIENT_STATE_CHARS) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(value, 'base64').toString('utf8'));
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null || (parsed as { cb?: unknown }).cb !== 1) return null;
  const { token, decline } = parsed as { token?: unknown; decline?: unknown };
  const state: ClientState = {};
  if (typeof token === 'string' && token !== '' && token.length <= MAX_TOKEN_CHARS) state.token = token;
  if (decline === true) state.decline = true;
  return state;
}
