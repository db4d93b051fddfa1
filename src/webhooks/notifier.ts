// Notification functions (docs/protocols/webhook-providers.md section 5): each posts an event to the operator gateway
// (OPERATOR_GATEWAY_URL) as JSON. Headers:
//   Idempotency-Key          the event's key, so the gateway can drop a repeat (docs/protocols/webhook-providers.md section 5)
//   X-Callbridge-Event       `<provider>/<event>`
//   X-Callbridge-Signature   `t=<unix s>,v1=<hex HMAC-SHA256(OPERATOR_GATEWAY_SECRET, "<t>.<body>")>`
// The signature covers the timestamp so a captured request cannot be replayed later. With no URL
// configured the event is logged only.
import type { Logger } from 'pino';
import { GatewayDeliveryError, retryableStatus } from '../errors.js';
import type { NormalizedEvent, NotificationFunction } from './provider.js';
import { postToOperator } from './operator-post.js';
import { hmac } from './signatures.js';

export interface OperatorGatewayOptions {
  url: string | null;
  secret: string | null;
  timeoutMs: number;
  logger: Logger;
  now: () => number;
}

/** The body the operator gateway receives. */
export function operatorGatewayBody(event: NormalizedEvent): string {
  return JSON.stringify({
    name: event.name,
    provider: event.provider,
    event: event.event,
    idempotencyKey: event.idempotencyKey,
    receivedAt: event.receivedAt,
    payload: event.payload,
  });
}

export function signOperatorGatewayBody(secret: string, body: string, unixSeconds: number): string {
  return `t=${unixSeconds},v1=${hmac('sha256', secret, `${unixSeconds}.`, body).toString('hex')}`;
}

/** The notification function for one provider. */
export function operatorGatewayNotifier(
  provider: string,
  options: OperatorGatewayOptions,
): NotificationFunction {
  const log = options.logger.child({ provider });
  const { url, secret } = options;

  if (!url) {
    return async (event) => {
      log.info(
        { event: event.name, idempotencyKey: event.idempotencyKey },
        'webhook event (no operator gateway: logged only)',
      );
    };
  }

  return async (event) => {
    const body = operatorGatewayBody(event);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'idempotency-key': event.idempotencyKey,
      'x-callbridge-event': event.name,
    };
    if (secret)
      headers['x-callbridge-signature'] = signOperatorGatewayBody(
        secret,
        body,
        Math.floor(options.now() / 1000),
      );
    let status: number;
    try {
      status = await postToOperator(url, headers, body, options.timeoutMs);
    } catch (err) {
      throw new GatewayDeliveryError('operator gateway could not be reached', {
        retryable: true,
        cause: err,
      });
    }
    if (status < 200 || status > 299) {
      throw new GatewayDeliveryError(`operator gateway answered ${status}`, {
        retryable: retryableStatus(status),
        status,
      });
    }
  };
}
