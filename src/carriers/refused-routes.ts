// The routes of a carrier production does not serve (src/carriers/index.ts): whatever comes under
// its path is refused before its body is read, counted, and answered with what to set.
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { CallIntake } from '../call/carrier-port.js';
import { BadSignatureError } from '../errors.js';

export function refusedCarrierRoutes(
  carrier: string,
  message: string,
  intake: CallIntake,
): FastifyPluginAsync {
  return async function plugin(app: FastifyInstance): Promise<void> {
    // Refused whatever it holds: the body is never parsed.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
    app.all(`/carriers/${carrier}/*`, async () => {
      intake.refused(carrier, 'unverified');
      throw new BadSignatureError(message);
    });
  };
}
