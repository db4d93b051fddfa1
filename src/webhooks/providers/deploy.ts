// `deploy`, a deployment host. docs/protocols/webhook-providers.md section 3: HMAC-SHA1, hex, over the raw body, header
// `x-deploy-signature`, keyed with the secret returned when the webhook was created. docs/protocols/webhook-providers.md section 2:
// delivery id in body `id`, event in body `type` (`deployment.succeeded` → `deploy.succeeded`).
import { deliveryIdOf, textField } from '../payload.js';
import type { WebhookProvider } from '../provider.js';
import { header, verifyHeaderDigest } from '../signatures.js';

const SIGNATURE_HEADER = 'x-deploy-signature';

const EVENTS: Record<string, string> = {
  'deployment.succeeded': 'deploy.succeeded',
  'deployment.error': 'deploy.error',
  'deployment.created': 'deploy.created',
  'deployment.canceled': 'deploy.canceled',
};

export const deployProvider: WebhookProvider = {
  name: 'deploy',
  secretNames: ['deploy'],
  queueEvents: [],

  verify(request, secrets) {
    return verifyHeaderDigest({
      headerName: SIGNATURE_HEADER,
      value: header(request.headers, SIGNATURE_HEADER),
      algorithm: 'sha1',
      encoding: 'hex',
      secrets: secrets('deploy'),
      signed: () => [request.rawBody],
    });
  },

  normalize(_request, body) {
    const type = textField(body, 'type') ?? '';
    const event = Object.hasOwn(EVENTS, type) ? EVENTS[type] : undefined;
    if (!event) return { kind: 'ignored', type };
    return { kind: 'event', event, deliveryId: deliveryIdOf(textField(body, 'id')) };
  },
};
