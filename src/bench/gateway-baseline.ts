// The gateway benchmark's baseline (its own process): a bare Fastify route that does what every
// signed webhook costs at the least, reading the raw body and checking its HMAC-SHA256 signature
// (`x-hub-signature-256: sha256=<hex>`) in constant time, and nothing of the gateway's own work
// (delivery-id dedupe in the store, normalizing, forwarding, metrics, logs).
import { createHmac, timingSafeEqual } from 'node:crypto';
import Fastify from 'fastify';
import { toParent } from './ipc.js';

const [secret = ''] = process.argv.slice(2);
const app = Fastify({ logger: false });
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

app.post('/webhooks/code', async (req, reply) => {
  const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  const header = req.headers['x-hub-signature-256'];
  const given = Buffer.from(typeof header === 'string' ? header.replace(/^sha256=/, '') : '', 'hex');
  const expected = createHmac('sha256', secret).update(body).digest();
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return reply.code(401).send();
  return reply.code(202).send({ accepted: true });
});

await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
toParent({ type: 'ready', port: typeof address === 'object' && address ? address.port : 0 });
process.on('disconnect', () => void app.close().then(() => process.exit(0)));
