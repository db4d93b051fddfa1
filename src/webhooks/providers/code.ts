// `code`, a code host. docs/protocols/webhook-providers.md section 3: HMAC-SHA256, hex prefixed with `sha256=`, over the raw body,
// header `x-hub-signature-256`. docs/protocols/webhook-providers.md section 2: delivery id in `x-code-delivery` (alias
// `x-github-delivery`); event from header `x-code-event` (alias `x-github-event`) plus body `action`.
// `workflow_run.completed` may go through the shared queue (docs/protocols/webhook-providers.md section 6);
// `package.published` never does (rule 3).
import { deliveryIdOf, textField } from '../payload.js';
import type { WebhookProvider } from '../provider.js';
import { header, verifyHeaderDigest } from '../signatures.js';

const SIGNATURE_HEADER = 'x-hub-signature-256';
const PREFIX = 'sha256=';

const EVENTS: Record<string, string> = {
  'workflow_run.completed': 'workflow_run.completed',
  'package.published': 'package.published',
};

export const codeProvider: WebhookProvider = {
  name: 'code',
  secretNames: ['code'],
  queueEvents: ['workflow_run.completed'],

  verify(request, secrets) {
    const value = header(request.headers, SIGNATURE_HEADER);
    if (value !== undefined && value !== '' && !value.startsWith(PREFIX)) {
      return { ok: false, reason: 'malformed', message: `${SIGNATURE_HEADER} must start with ${PREFIX}` };
    }
    return verifyHeaderDigest({
      headerName: SIGNATURE_HEADER,
      value: value?.slice(PREFIX.length),
      algorithm: 'sha256',
      encoding: 'hex',
      secrets: secrets('code'),
      signed: () => [request.rawBody],
    });
  },

  normalize(request, body) {
    const kind = header(request.headers, 'x-code-event') ?? header(request.headers, 'x-github-event') ?? '';
    const type = `${kind}.${textField(body, 'action') ?? ''}`;
    const event = Object.hasOwn(EVENTS, type) ? EVENTS[type] : undefined;
    if (!event) return { kind: 'ignored', type };
    const delivery =
      header(request.headers, 'x-code-delivery') ?? header(request.headers, 'x-github-delivery');
    return { kind: 'event', event, deliveryId: deliveryIdOf(delivery) };
  },
};
