// docs/protocols/webhook-providers.md sections 1 and 3: signatures are checked on the bytes as
// received, so in the webhook scope every body, whatever its content type, arrives as the raw
// Buffer, unparsed.
import type { FastifyInstance } from 'fastify';

/** A media type Fastify can read (`type/subtype`, RFC 9110 tokens, parameters after it). */
const MEDIA_TYPE = /^[\w!#$%&'*+.^`|~-]+\/[\w!#$%&'*+.^`|~-]+\s*(?:;|$)/;
const RAW_BYTES = 'application/octet-stream';

/** Makes `scope` read every request body as a raw Buffer of at most `bodyLimitBytes`. */
export function acceptRawBodies(scope: FastifyInstance, bodyLimitBytes: number): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: bodyLimitBytes }, (_request, body, done) =>
    done(null, body),
  );
  // Fastify answers an empty or unparseable Content-Type with its own 415 before any handler,
  // so such a request would end in no outcome. The type plays no part here: such a body is read
  // as raw bytes like any other, verified, and ends in exactly one outcome.
  scope.addHook('onRequest', async (request) => {
    const type = request.headers['content-type'];
    if (type !== undefined && !MEDIA_TYPE.test(type)) request.headers['content-type'] = RAW_BYTES;
  });
}
