// A loopback port nothing listens on right now: the OS picks it, and we let it go again.
import { once } from 'node:events';
import { createServer } from 'node:net';

export async function freePort(host = '127.0.0.1'): Promise<number> {
  const probe = createServer().listen(0, host);
  await once(probe, 'listening');
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
