// `inbox`, a shared inbox, with two webhook types told apart by `x-inbox-request-timestamp`
// (docs/protocols/webhook-providers.md section 3):
// - application webhook: base64 HMAC-SHA256 of `<timestamp>:<raw body>`, timestamp in ms, at most
//   5 minutes off; application secret (`inbox`). It may carry a validation challenge.
// - rules webhook: base64 HMAC-SHA1 of the body's compact JSON, rules secret (`inbox_rules`, kept
//   apart from the application secret, docs/protocols/webhook-providers.md section 3). The raw bytes are tried first; only if they
//   fail, their compact re-serialization (the one documented exception to raw-bytes verification).
// Delivery id in body `id`, event in body `type`.
import { deliveryIdOf, parsedBody, textField } from '../payload.js';
import type { SecretLookup, Verification, WebhookProvider, WebhookRequest } from '../provider.js';
import {
  anyMatch,
  decodeDigest,
  header,
  hmac,
  mismatch,
  noSecret,
  verifyHeaderDigest,
} from '../signatures.js';

const SIGNATURE_HEADER = 'x-inbox-signature';
const TIMESTAMP_HEADER = 'x-inbox-request-timestamp';
const CHALLENGE_HEADER = 'x-inbox-challenge';
const TOLERANCE_MS = 5 * 60_000;

const EVENTS: Record<string, string> = {
  inbound: 'message.received',
  outbound: 'message.sent',
  assign: 'assignee.changed',
};

function verifyApplication(request: WebhookRequest, timestamp: string, secrets: SecretLookup, nowMs: number) {
  if (!/^\d{1,16}$/.test(timestamp)) {
    return {
      ok: false,
      reason: 'malformed',
      message: `${TIMESTAMP_HEADER} is not a millisecond timestamp`,
    } as const;
  }
  const result = verifyHeaderDigest({
    headerName: SIGNATURE_HEADER,
    value: header(request.headers, SIGNATURE_HEADER),
    algorithm: 'sha256',
    encoding: 'base64',
    secrets: secrets('inbox'),
    signed: () => [timestamp, ':', request.rawBody],
  });
  if (!result.ok) return result;
  // Checked after the signature, so "expired" only ever describes a genuine, replayed or late request.
  if (Math.abs(nowMs - Number(timestamp)) > TOLERANCE_MS) {
    return {
      ok: false,
      reason: 'expired',
      message: `${TIMESTAMP_HEADER} is more than 5 minutes off`,
    } as const;
  }
  return { ok: true, variant: 'app' } as const;
}

function compactJson(rawBody: Buffer): string | null {
  const parsed = parsedBody(rawBody);
  return parsed.ok ? JSON.stringify(parsed.value) : null;
}

function verifyRules(request: WebhookRequest, secrets: SecretLookup): Verification {
  const value = header(request.headers, SIGNATURE_HEADER);
  if (value === undefined || value === '') {
    return { ok: false, reason: 'missing', message: `missing ${SIGNATURE_HEADER} header` };
  }
  const given = decodeDigest(value, 'base64', 'sha1');
  if (!given)
    return { ok: false, reason: 'malformed', message: `${SIGNATURE_HEADER} is not a base64 HMAC-SHA1` };
  const keys = secrets('inbox_rules');
  if (keys.length === 0) return noSecret(SIGNATURE_HEADER);
  if (anyMatch([given], keys, (secret) => hmac('sha1', secret, request.rawBody))) {
    return { ok: true, variant: 'rules' };
  }
  const compact = compactJson(request.rawBody);
  if (compact !== null && anyMatch([given], keys, (secret) => hmac('sha1', secret, compact))) {
    return { ok: true, variant: 'rules' };
  }
  return mismatch(SIGNATURE_HEADER);
}

export const inboxProvider: WebhookProvider = {
  name: 'inbox',
  secretNames: ['inbox', 'inbox_rules'],
  queueEvents: [],

  verify(request, secrets, nowMs) {
    const timestamp = header(request.headers, TIMESTAMP_HEADER);
    return timestamp === undefined
      ? verifyRules(request, secrets)
      : verifyApplication(request, timestamp, secrets, nowMs);
  },

  // docs/protocols/webhook-providers.md section 4: answered after the signature checks out; rules webhooks carry no challenges.
  challenge(request, verification) {
    if (verification.variant !== 'app') return null;
    return header(request.headers, CHALLENGE_HEADER) ?? null;
  },

  normalize(_request, body) {
    const type = textField(body, 'type') ?? '';
    const event = Object.hasOwn(EVENTS, type) ? EVENTS[type] : undefined;
    if (!event) return { kind: 'ignored', type };
    return { kind: 'event', event, deliveryId: deliveryIdOf(textField(body, 'id')) };
  },
};
