// Builds the normalized event (docs/protocols/webhook-providers.md section 5) from a provider's reading of a verified payload.
import { createHash } from 'node:crypto';
import type { NormalizedEvent } from './provider.js';

/**
 * docs/protocols/webhook-providers.md section 5: every event carries an idempotency key. It is the provider's delivery id
 * (docs/protocols/webhook-providers.md section 2) where there is one, else the SHA-256 of the provider name and the raw body, so a
 * byte-identical redelivery still dedupes. Namespaced by provider: ids of two providers may collide.
 */
export function idempotencyKeyFor(provider: string, deliveryId: string | null, rawBody: Buffer): string {
  if (deliveryId) return `${provider}:${deliveryId}`;
  return `${provider}:sha256:${createHash('sha256').update(provider).update(rawBody).digest('hex')}`;
}

export function normalizedEvent(input: {
  provider: string;
  event: string;
  deliveryId: string | null;
  rawBody: Buffer;
  payload: unknown;
  receivedAtMs: number;
}): NormalizedEvent {
  return {
    // docs/protocols/webhook-providers.md section 5: the forwarded name is <provider>/<event>.
    name: `${input.provider}/${input.event}`,
    provider: input.provider,
    event: input.event,
    idempotencyKey: idempotencyKeyFor(input.provider, input.deliveryId, input.rawBody),
    receivedAt: new Date(input.receivedAtMs).toISOString(),
    payload: input.payload,
  };
}
