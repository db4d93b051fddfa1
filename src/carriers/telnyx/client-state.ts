// What callbridge keeps in a Telnyx call's `client_state` (docs/protocols/telnyx.md sections 2
// and 10): Telnyx returns it, base64 as given, on every later webhook of the call and in the
// media stream's `start`. It carries the stream token (one more channel besides the media URL's
// path), marks a call being declined, so the polite decline needs no state of our own, and holds
// the reference to the outbound context of a call this server placed (docs/protocols/telnyx.md section 9), so
// every later webhook of the call names its attempt.

export interface ClientState {
  token?: string;
  /** The call is being declined: speak the message once answered, then hang up. */
  decline?: true;
  /** An outbound call's context reference (src/call/outbound/outbound-context.ts), resolved by the call intake. */
  ctx?: string;
}

/**
 * Longest client_state read back. Ours is a few hundred characters, a few more with an outbound
 * context's reference; anything past this is not ours.
 */
const MAX_CLIENT_STATE_CHARS = 8192;
const MAX_TOKEN_CHARS = 4096;
const MAX_CONTEXT_CHARS = 2048;

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
  const { token, decline, ctx } = parsed as { token?: unknown; decline?: unknown; ctx?: unknown };
  const state: ClientState = {};
  if (typeof token === 'string' && token !== '' && token.length <= MAX_TOKEN_CHARS) state.token = token;
  if (decline === true) state.decline = true;
  // A context that is there but unreadable stays there, empty: the routes refuse it as forged rather
  // than take the call for one this server did not place.
  if (ctx !== undefined) state.ctx = typeof ctx === 'string' && ctx.length <= MAX_CONTEXT_CHARS ? ctx : '';
  return state;
}
