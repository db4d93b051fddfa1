// `payments`, a payment processor, served only while its secret is configured. docs/protocols/webhook-providers.md section 3:
// `payments-signature: t=<unix s>,v1=<hex>[,v1=…]`, hex HMAC-SHA256 of `<t>.<raw body>` with the
// endpoint signing secret; 300 s tolerance; any `v1` may match (the processor signs with every
// active secret during its own rotation). Delivery id in body `id`, event type as given in `type`.
import { deliveryIdOf, textField } from '../payload.js';
import type { Verification, WebhookProvider } from '../provider.js';
import { anyMatch, decodeDigest, header, hmac, mismatch, noSecret } from '../signatures.js';

const SIGNATURE_HEADER = 'payments-signature';
const TOLERANCE_S = 300;
/** Types become part of forwarded event names: keep them plain. */
const EVENT_TYPE = /^[A-Za-z0-9_.:-]{1,100}$/;

interface ParsedHeader {
  timestamp: string;
  signatures: Buffer[];
}

function parseHeader(value: string): ParsedHeader | null {
  let timestamp: string | null = null;
  const signatures: Buffer[] = [];
  for (const part of value.split(',')) {
    const at = part.indexOf('=');
    if (at <= 0) return null;
    const key = part.slice(0, at).trim();
    const item = part.slice(at + 1).trim();
    if (key === 't') {
      if (timestamp !== null || !/^\d{1,12}$/.test(item)) return null;
      timestamp = item;
    } else if (key === 'v1') {
      const digest = decodeDigest(item, 'hex', 'sha256');
      if (!digest) return null;
      signatures.push(digest);
    }
    // Other schemes (e.g. v0 test signatures) are ignored, never trusted.
  }
  return timestamp !== null && signatures.length > 0 ? { timestamp, signatures } : null;
}

export const paymentsProvider: WebhookProvider = {
  name: 'payments',
  secretNames: ['payments'],
  onlyWithSecret: true,
  queueEvents: [],

  verify(request, secrets, nowMs): Verification {
    const value = header(request.headers, SIGNATURE_HEADER);
    if (value === undefined || value === '') {
      return { ok: false, reason: 'missing', message: `missing ${SIGNATURE_HEADER} header` };
    }
    const parsed = parseHeader(value);
    if (!parsed) {
      return { ok: false, reason: 'malformed', message: `${SIGNATURE_HEADER} must be t=<unix s>,v1=<hex>` };
    }
    const keys = secrets('payments');
    if (keys.length === 0) return noSecret(SIGNATURE_HEADER);
    const signed = (secret: string) => hmac('sha256', secret, `${parsed.timestamp}.`, request.rawBody);
    if (!anyMatch(parsed.signatures, keys, signed)) return mismatch(SIGNATURE_HEADER);
    if (Math.abs(nowMs / 1000 - Number(parsed.timestamp)) > TOLERANCE_S) {
      return {
        ok: false,
        reason: 'expired',
        message: `${SIGNATURE_HEADER} timestamp is more than 300 s off`,
      };
    }
    return { ok: true };
  },

  normalize(_request, body) {
    const type = textField(body, 'type') ?? '';
    if (!EVENT_TYPE.test(type)) return { kind: 'ignored', type: '' };
    return { kind: 'event', event: type, deliveryId: deliveryIdOf(textField(body, 'id')) };
  },
};
