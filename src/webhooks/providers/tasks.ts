// `tasks`, a task manager. docs/protocols/webhook-providers.md section 3: HMAC-SHA256, base64, over the raw body, header
// `x-tasks-hmac-sha256`, keyed with the application's client secret. docs/protocols/webhook-providers.md section 2: delivery id in
// `x-tasks-delivery-id`, event in body `event_name`.
import { deliveryIdOf, textField } from '../payload.js';
import type { WebhookProvider } from '../provider.js';
import { header, verifyHeaderDigest } from '../signatures.js';

const SIGNATURE_HEADER = 'x-tasks-hmac-sha256';

const EVENTS: Record<string, string> = {
  'item:added': 'task.created',
  'item:completed': 'task.completed',
  'note:added': 'comment.added',
};

export const tasksProvider: WebhookProvider = {
  name: 'tasks',
  secretNames: ['tasks'],
  queueEvents: [],

  verify(request, secrets) {
    return verifyHeaderDigest({
      headerName: SIGNATURE_HEADER,
      value: header(request.headers, SIGNATURE_HEADER),
      algorithm: 'sha256',
      encoding: 'base64',
      secrets: secrets('tasks'),
      signed: () => [request.rawBody],
    });
  },

  normalize(request, body) {
    const type = textField(body, 'event_name') ?? '';
    const event = Object.hasOwn(EVENTS, type) ? EVENTS[type] : undefined;
    if (!event) return { kind: 'ignored', type };
    return { kind: 'event', event, deliveryId: deliveryIdOf(header(request.headers, 'x-tasks-delivery-id')) };
  },
};
