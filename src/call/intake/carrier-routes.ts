// Plugs carrier adapters into the server: each adapter's webhook routes get the call intake, and
// the core serves its media streams at `/media/<name>`, `/media/<name>/<instance>` and
// `/media/<name>/<instance>/<token>` (docs/architecture.md, "Call intake").
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CallIntake, CarrierAdapter } from '../carrier-port.js';
import { handleMediaSocket, type MediaSocketDeps } from '../stream/media-socket.js';
import { mediaPath } from './media-url.js';

interface MediaParams {
  instance?: string;
  token?: string;
}

/** The refusal reason of an upgrade an adapter turned away, from its typed error's code. */
function upgradeRefusal(err: unknown): string {
  switch ((err as { code?: unknown }).code) {
    case 'CALLBRIDGE_BAD_SIGNATURE':
      return 'bad_signature';
    case 'CALLBRIDGE_UNAUTHORIZED':
      return 'unauthorized';
    default:
      return 'upgrade_refused';
  }
}

export function carrierRoutes(
  adapters: readonly CarrierAdapter[],
  intake: CallIntake,
  media: MediaSocketDeps,
) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    for (const adapter of adapters) {
      await app.register(adapter.routes(intake));
      const verifyUpgrade = adapter.verifyUpgrade?.bind(adapter);
      const preValidation = verifyUpgrade
        ? async (req: FastifyRequest) => {
            try {
              verifyUpgrade(req);
            } catch (err) {
              intake.refused(adapter.name, upgradeRefusal(err));
              throw err;
            }
          }
        : undefined;
      const base = mediaPath(adapter.name);
      for (const path of [base, `${base}/:instance`, `${base}/:instance/:token`]) {
        app.get(path, { websocket: true, ...(preValidation ? { preValidation } : {}) }, (socket, req) =>
          handleMediaSocket(socket, adapter, media, { pathToken: (req.params as MediaParams).token }),
        );
      }
    }
  };
}
