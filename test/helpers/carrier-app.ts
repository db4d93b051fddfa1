// A Fastify app holding one carrier's webhook plugin and nothing else, listening on an ephemeral
// loopback port, with the project's error format (as src/app.ts renders it): no stack, no internal
// message.
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyPluginAsync,
} from 'fastify';
import pino, { type Logger } from 'pino';
import { codeForStatus, NotFoundError } from '../../src/errors.js';

export interface CarrierApp {
  app: FastifyInstance;
  baseUrl: string;
  /** `METHOD /path STATUS` of every request answered, in order. */
  answered: string[];
  close(): Promise<void>;
}

export async function startCarrierApp(plugin: FastifyPluginAsync, logger?: Logger): Promise<CarrierApp> {
  const app: FastifyInstance = Fastify(
    logger ? { loggerInstance: logger as FastifyBaseLogger } : { logger: false },
  );
  const answered: string[] = [];
  app.addHook('onResponse', async (req, reply) => {
    answered.push(`${req.method} ${req.url.split('?')[0]} ${reply.statusCode}`);
  });
  app.setErrorHandler((err: FastifyError, _req, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    const ours = typeof err.code === 'string' && err.code.startsWith('CALLBRIDGE_');
    const message = status >= 500 && !ours ? 'internal error' : err.message;
    return reply.code(status).send({ error: { code: ours ? err.code : codeForStatus(status), message } });
  });
  app.setNotFoundHandler((req) => {
    throw new NotFoundError(`no route for ${req.method} ${req.url.split('?')[0]}`);
  });
  await app.register(plugin);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  return { app, baseUrl: `http://127.0.0.1:${port}`, answered, close: () => app.close() };
}

/** A pino logger writing JSON lines into `lines`, for checking what reaches the logs. */
export function sinkLogger(lines: string[]): Logger {
  return pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
}
