// Telnyx's webhooks (docs/protocols/telnyx.md section 2): `POST /carriers/telnyx/events`,
// verified with Ed25519 when the public key is set. Telnyx is answered 200 at once; what the event
// asks for (answering with a media stream, the polite decline) runs after, through the REST API
// (deferred-api.ts). A call this server placed carries its outbound context's reference in
// `client_state` (section 9): once answered, it is prepared like an inbound call and its stream
// started; its hang-up is its final status, and the detection events are its verdict (events.ts).
import type { KeyObject } from 'node:crypto';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { type CallIntake, OBSERVER_HEADER, type PreparedCall } from '../../call/carrier-port.js';
import type { TelnyxStreamCodec } from './config.js';
import { BadRequestError, BadSignatureError } from '../../errors.js';
import type { Metrics } from '../../metrics/metrics.js';
import { RecentIds } from '../recent-ids.js';
import type { TelnyxCalls } from './call-answers.js';
import { createDeferredApi } from './deferred-api.js';
import { onTelnyxEvent } from './events.js';
import type { TelnyxRest } from './rest.js';
import { verifyTelnyxSignature } from './signature.js';
import { readTelnyxWebhook } from './webhook.js';

export interface TelnyxRoutesDeps {
  intake: CallIntake;
  /** Null without an API key: calls cannot be answered, and are logged as such. */
  rest: TelnyxRest | null;
  /** Empty: webhooks are not verified. */
  publicKeys: readonly KeyObject[];
  /** The simulated carrier's own key (src/carriers/simulation-keys.ts), when Telnyx has no public key. */
  simulationPublicKeys?: readonly KeyObject[];
  /** Unverified webhooks are refused (NODE_ENV=production without TELNYX_PUBLIC_KEY). */
  refuseUnverified: boolean;
  codec: TelnyxStreamCodec;
  logger: Logger;
  metrics: Metrics;
  now: () => number;
}

export const TELNYX_EVENTS_PATH = '/carriers/telnyx/events';
const BODY_LIMIT_BYTES = 64 * 1024;
const BAD_REQUEST = new BadRequestError('').code;
/** A repeated `call.initiated` (a retry, or a replay inside the signature's 300 s) is answered once. */
const REPEAT_MEMORY_MS = 10 * 60_000;
const REPEAT_MEMORY_ENTRIES = 10_000;

/** Whether the webhook was verified; with no public key (outside production) nothing can verify it. */
function verify(deps: TelnyxRoutesDeps, req: FastifyRequest, raw: Buffer): boolean {
  // Without a public key, only the simulated carrier's signed webhooks are verified.
  const signed = req.headers['telnyx-signature-ed25519'] !== undefined;
  const publicKeys =
    deps.publicKeys.length > 0 ? deps.publicKeys : signed ? (deps.simulationPublicKeys ?? []) : [];
  if (publicKeys.length === 0) {
    if (!deps.refuseUnverified) return false;
    deps.intake.refused('telnyx', 'unverified');
    throw new BadSignatureError('telnyx webhooks are refused: TELNYX_PUBLIC_KEY is not set');
  }
  const check = verifyTelnyxSignature(publicKeys, {
    signature: req.headers['telnyx-signature-ed25519'],
    timestamp: req.headers['telnyx-timestamp'],
    rawBody: raw,
    nowMs: deps.now(),
  });
  if (!check.ok) {
    deps.intake.refused('telnyx', `signature_${check.reason}`);
    throw new BadSignatureError(`telnyx-signature-ed25519 does not verify this request (${check.reason})`);
  }
  return true;
}

export function telnyxRoutes(deps: TelnyxRoutesDeps): FastifyPluginAsync {
  const { intake } = deps;
  const log = deps.logger.child({ carrier: 'telnyx' });
  const memory = () =>
    new RecentIds({ ttlMs: REPEAT_MEMORY_MS, maxEntries: REPEAT_MEMORY_ENTRIES, now: deps.now });
  const calls: TelnyxCalls = {
    intake,
    codec: deps.codec,
    hasApi: deps.rest !== null,
    api: createDeferredApi(deps.rest, log, deps.metrics),
    log,
    initiated: memory(),
    // A repeated `call.answered` of an outbound call starts its stream once.
    answered: memory(),
  };

  return async function plugin(app: FastifyInstance): Promise<void> {
    // Signatures are checked on the bytes as received: every body arrives as the raw Buffer.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES }, (_req, body, done) =>
      done(null, body),
    );
    // Closing waits for every API request the routes started.
    app.addHook('onClose', () => calls.api.settled());

    app.post(
      TELNYX_EVENTS_PATH,
      { bodyLimit: BODY_LIMIT_BYTES },
      async (req: FastifyRequest, reply: FastifyReply) => {
        const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        const verified = verify(deps, req, raw);
        let prepared: PreparedCall | undefined;
        try {
          const webhook = readTelnyxWebhook(raw);
          if (!intake.allowance(verified).carrierApi) {
            // Whatever Telnyx is told to do is a call on its API: an unverified webhook causes none.
            // Acknowledged, so a real Telnyx does not retry it, and counted.
            intake.refused('telnyx', 'unverified');
            req.log.info(
              { eventType: webhook.eventType },
              'unverified telnyx webhook acknowledged, not acted on',
            );
            return reply.code(200).send({ received: true });
          }
          prepared = await onTelnyxEvent(calls, webhook);
        } catch (err) {
          const { code, refusal: reason } = err as { code?: unknown; refusal?: unknown };
          if (code === BAD_REQUEST)
            intake.refused('telnyx', typeof reason === 'string' ? reason : 'malformed');
          throw err;
        }
        if (prepared?.observerToken) reply.header(OBSERVER_HEADER, prepared.observerToken);
        // Telnyx wants a 200; anything else sends the event to the failover URL.
        return reply.code(200).send({ received: true });
      },
    );
  };
}
