// Telnyx's Call Control webhooks as the simulated carrier sends them (docs/protocols/telnyx.md
// sections 2 and 7): JSON `{data: {event_type, id, occurred_at, payload}}`, signed with Ed25519 over
// `${telnyx-timestamp}|${body}` when the account's key is in the environment. Real Telnyx signs with
// its private key; the simulation needs that key's seed (`CALLBRIDGE_SIM_TELNYX_PRIVATE_KEY`,
// base64 of 32 bytes), the counterpart of the server's TELNYX_PUBLIC_KEY.
import { createPrivateKey, createPublicKey, type KeyObject, randomUUID, sign } from 'node:crypto';
import { postWebhook, type WebhookResult } from './http.js';

export const TELNYX_SIM_PRIVATE_KEY_VARIABLE = 'CALLBRIDGE_SIM_TELNYX_PRIVATE_KEY';

// PKCS#8 wrapping of a raw Ed25519 seed (RFC 8410): a fixed prefix, then the 32 bytes.
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export type TelnyxSigning =
  | { kind: 'unsigned' }
  | { kind: 'signed'; key: KeyObject; matchesServer: boolean }
  /** The server verifies but the simulation has no key to sign with. */
  | { kind: 'no-key' }
  | { kind: 'bad-key' };

export function telnyxSigning(env: Record<string, string | undefined>): TelnyxSigning {
  const publicKeys = (env.TELNYX_PUBLIC_KEY ?? '')
    .split(',')
    .map((key) => key.trim())
    .filter((key) => key !== '');
  const seed = env[TELNYX_SIM_PRIVATE_KEY_VARIABLE]?.trim();
  if (!seed) return publicKeys.length > 0 ? { kind: 'no-key' } : { kind: 'unsigned' };
  const bytes = Buffer.from(seed, 'base64');
  if (bytes.length !== 32) return { kind: 'bad-key' };
  const key = createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519_PREFIX, bytes]),
    format: 'der',
    type: 'pkcs8',
  });
  const jwk = createPublicKey(key).export({ format: 'jwk' });
  const publicKey = Buffer.from(jwk.x ?? '', 'base64url').toString('base64');
  return { kind: 'signed', key, matchesServer: publicKeys.length === 0 || publicKeys.includes(publicKey) };
}

export function describeTelnyxSigning(env: Record<string, string | undefined>): string {
  const signing = telnyxSigning(env);
  switch (signing.kind) {
    case 'unsigned':
      return 'unsigned: TELNYX_PUBLIC_KEY not set';
    case 'signed':
      return signing.matchesServer
        ? 'signed with Ed25519'
        : `signed with Ed25519, but ${TELNYX_SIM_PRIVATE_KEY_VARIABLE} is not the key of TELNYX_PUBLIC_KEY`;
    case 'no-key':
      return `unsigned: TELNYX_PUBLIC_KEY is set but ${TELNYX_SIM_PRIVATE_KEY_VARIABLE} is not, so the server will refuse`;
    case 'bad-key':
      return `unsigned: ${TELNYX_SIM_PRIVATE_KEY_VARIABLE} is not the base64 of a 32-byte Ed25519 seed`;
  }
}

export function telnyxEvent(eventType: string, payload: Record<string, unknown>): string {
  return JSON.stringify({
    data: {
      record_type: 'event',
      event_type: eventType,
      id: randomUUID(),
      occurred_at: new Date().toISOString(),
      payload,
    },
    meta: { attempt: 1 },
  });
}

export function postTelnyxEvent(
  url: string,
  body: string,
  signing: TelnyxSigning,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<WebhookResult> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'telnyx-webhooks',
  };
  if (signing.kind === 'signed') {
    const timestamp = String(Math.floor(Date.now() / 1000));
    headers['telnyx-timestamp'] = timestamp;
    headers['telnyx-signature-ed25519'] = sign(
      null,
      Buffer.from(`${timestamp}|${body}`),
      signing.key,
    ).toString('base64');
  }
  return postWebhook({ url, headers, body, timeoutMs, signal });
}
