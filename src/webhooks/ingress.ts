// `POST /webhooks/:provider` (docs/protocols/webhook-providers.md section 4): provider lookup and the
// auth-failure limiter before the body is read, then signature check on the raw bytes, the inbox
// challenge, normalization and dispatch. Every request ends in exactly one outcome, counted in
// callbridge_webhook_requests_total.
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import {
  BadRequestError,
  BadSignatureError,
  BodyTooLargeError,
  NotFoundError,
  RateLimitedError,
  UnauthorizedError,
  UnavailableError,
} from '../errors.js';
import type { Metrics } from '../metrics/metrics.js';
import type { AuthFailureLimiter } from './auth-failure-limiter.js';
import type { Dispatch, DispatchOutcome } from './dispatch.js';
import { describeError } from './forward.js';
import { normalizedEvent } from './normalized-event.js';
import { parsedBody } from './payload.js';
import type { Verification, WebhookProvider, WebhookRequest } from './provider.js';
import type { ProviderStatus } from './provider-status.js';
import { acceptRawBodies } from './raw-body.js';
import type { WebhookSecrets } from './secrets.js';

export type WebhookOutcome =
  | 'forwarded'
  | 'queued'
  | 'duplicate'
  | 'ignored'
  | 'challenge'
  | 'bad_signature'
  | 'expired'
  | 'rate_limited'
  | 'too_large'
  | 'forward_failed'
  | 'in_progress'
  | 'unavailable'
  | 'invalid_body'
  | 'not_found';

export interface IngressDeps {
  bodyLimitBytes: number;
  /** The provider served under this path segment right now, if any. */
  resolveProvider(name: string): WebhookProvider | undefined;
  secrets: WebhookSecrets;
  limiter: AuthFailureLimiter;
  dispatch: Dispatch;
  status: ProviderStatus;
  metrics: Metrics;
  logger: Logger;
  now: () => number;
}

interface WebhookRoute {
  Params: { provider: string };
}

/** How long a provider should wait before retrying a delivery another request is processing. */
const IN_PROGRESS_RETRY_AFTER_S = 5;
/** How long a provider should wait before retrying while the store is unavailable. */
const UNAVAILABLE_RETRY_AFTER_S = 10;
const EMPTY = Buffer.alloc(0);

/** The answer to a dispatched event: 2xx once it is taken, 503 (with when to retry) while it cannot be. */
async function answerOutcome(
  reply: FastifyReply,
  outcome: DispatchOutcome,
  eventName: string,
  markVerified: () => Promise<void>,
) {
  switch (outcome) {
    case 'forwarded':
      await markVerified();
      return reply.code(200).send({ status: 'forwarded', event: eventName });
    case 'queued':
      await markVerified();
      return reply.code(202).send({ status: 'queued', event: eventName });
    case 'duplicate':
      await markVerified();
      return reply.code(200).send({ status: 'duplicate' });
    case 'in_progress':
      reply.header('retry-after', String(IN_PROGRESS_RETRY_AFTER_S));
      throw new UnavailableError('this delivery is being processed; retry later');
    case 'forward_failed':
      // 503 so the provider retries; the key was released, so the retry is processed.
      throw new UnavailableError('the event could not be forwarded; retry later');
    case 'unavailable':
      // The store is away (a Redis outage, or a full queue): nothing was processed, so the
      // provider's retry is safe and is processed once the store is back.
      reply.header('retry-after', String(UNAVAILABLE_RETRY_AFTER_S));
      throw new UnavailableError('the webhook gateway cannot process events right now; retry later');
  }
}

export function webhookIngress(deps: IngressDeps): FastifyPluginAsync {
  const { metrics } = deps;
  const record = (provider: string, outcome: WebhookOutcome) =>
    metrics.webhookRequests.inc({ provider, outcome });
  // Metric labels stay bounded: an unknown path segment is never a label value.
  const labelOf = (request: FastifyRequest) => {
    const name = (request.params as Partial<WebhookRoute['Params']> | undefined)?.provider ?? '';
    return deps.resolveProvider(name)?.name ?? 'unknown';
  };

  function providerOf(request: FastifyRequest<WebhookRoute>): WebhookProvider {
    const provider = deps.resolveProvider(request.params.provider);
    if (!provider) {
      record('unknown', 'not_found');
      throw new NotFoundError(`no webhook provider ${JSON.stringify(request.params.provider.slice(0, 40))}`);
    }
    return provider;
  }

  // onRequest: runs before the body is read, so a limited IP costs no body upload.
  async function guard(request: FastifyRequest<WebhookRoute>, reply: FastifyReply) {
    const provider = providerOf(request);
    let state: Awaited<ReturnType<AuthFailureLimiter['check']>>;
    try {
      state = await deps.limiter.check(request.ip);
    } catch (err) {
      // Fail open: a store outage must not turn away every provider. Dispatch still needs the store.
      deps.logger.warn({ reason: describeError(err) }, 'webhook limiter unavailable');
      return;
    }
    if (state.limited) {
      record(provider.name, 'rate_limited');
      metrics.webhookRateLimited.inc({ provider: provider.name });
      reply.header('retry-after', String(Math.max(1, Math.ceil(state.retryAfterMs / 1000))));
      throw new RateLimitedError('too many authentication failures from this address; retry later');
    }
  }

  async function reject(request: FastifyRequest, provider: string, failure: Verification & { ok: false }) {
    metrics.webhookAuthFailures.inc({ provider, reason: failure.reason });
    record(provider, failure.reason === 'expired' ? 'expired' : 'bad_signature');
    try {
      await deps.limiter.recordFailure(request.ip);
    } catch (err) {
      deps.logger.warn({ reason: describeError(err) }, 'webhook limiter unavailable');
    }
    const log = { provider, ip: request.ip, reason: failure.reason };
    if (failure.reason === 'no_secret')
      deps.logger.warn(log, 'webhook rejected: no secret configured for provider');
    else deps.logger.info(log, 'webhook signature rejected');
    // docs/protocols/webhook-providers.md section 4: the request is rejected; a missing signature is unauthenticated, a wrong one forbidden.
    throw failure.reason === 'missing'
      ? new UnauthorizedError(failure.message)
      : new BadSignatureError(failure.message);
  }

  async function handle(request: FastifyRequest<WebhookRoute>, reply: FastifyReply) {
    const provider = providerOf(request);
    const received: WebhookRequest = {
      rawBody: Buffer.isBuffer(request.body) ? request.body : EMPTY,
      headers: request.headers,
    };
    const receivedAtMs = deps.now();

    const verification = provider.verify(received, deps.secrets.snapshot(), receivedAtMs);
    if (!verification.ok) return reject(request, provider.name, verification);

    const challenge = provider.challenge?.(received, verification) ?? null;
    if (challenge !== null) {
      record(provider.name, 'challenge');
      return reply.code(200).send({ challenge });
    }

    // Parsed once: a provider's check that needed it parsed already did (payload.ts).
    const parsed = parsedBody(received.rawBody);
    if (!parsed.ok) {
      record(provider.name, 'invalid_body');
      throw new BadRequestError('webhook body is not valid JSON');
    }
    const payload = parsed.value;

    const normalized = provider.normalize(received, payload);
    if (normalized.kind === 'ignored') {
      // docs/protocols/webhook-providers.md section 2: other event types are acknowledged and ignored, counted.
      record(provider.name, 'ignored');
      await deps.status.markVerified(provider.name);
      deps.logger.debug(
        { provider: provider.name, type: normalized.type.slice(0, 100) },
        'webhook event ignored',
      );
      return reply.code(200).send({ status: 'ignored' });
    }

    const event = normalizedEvent({
      provider: provider.name,
      event: normalized.event,
      deliveryId: normalized.deliveryId,
      rawBody: received.rawBody,
      payload,
      receivedAtMs,
    });
    const outcome = await deps.dispatch(provider, event);
    record(provider.name, outcome);
    return answerOutcome(reply, outcome, event.name, () => deps.status.markVerified(provider.name));
  }

  return async (scope) => {
    acceptRawBodies(scope, deps.bodyLimitBytes);

    // Translates Fastify's own body-limit error into ours and counts it; everything is then
    // rethrown to the app's error handler, which renders the error format.
    scope.setErrorHandler((err: FastifyError, request) => {
      if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
        record(labelOf(request), 'too_large');
        throw new BodyTooLargeError(`webhook body exceeds ${deps.bodyLimitBytes} bytes`);
      }
      throw err;
    });

    scope.post<WebhookRoute>(
      '/webhooks/:provider',
      { bodyLimit: deps.bodyLimitBytes, onRequest: guard },
      handle,
    );
  };
}
