// The gateway benchmark's baseline: a bare Fastify route doing what a signed webhook needs at the
// least, the same HMAC-SHA1 check of the raw body callbridge's `deploy` provider makes, answered
// with a fixed body. No idempotency, no store, no metrics, no logging.
import { createHmac, timingSafeEqual } from 'node:crypto';
import Fastify from 'fastify';

const secret = process.env.WEBHOOK_SECRET_DEPLOY ?? '';
const app = Fastify({ logger: false });
app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
app.get('/healthz', async () => ({ status: 'ok' }));
app.post('/webhooks/deploy', async (req, reply) => {
  const raw = req.body as Buffer;
  const given = Buffer.from(String(req.headers['x-deploy-signature'] ?? ''), 'hex');
  const expected = createHmac('sha1', secret).update(raw).digest();
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return reply.code(401).send({ error: { code: 'CALLBRIDGE_BAD_SIGNATURE', message: 'bad signature' } });
  }
  JSON.parse(raw.toString('utf8'));
  return { status: 'forwarded' };
});
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
