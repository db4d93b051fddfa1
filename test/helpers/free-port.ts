// A loopback port nothing listens on right now: the OS picks it, and we let it go again. For the
// few things that must be told their port before they start (a child process, a fixed-port fake).
import { once } from 'node:events';
import { createServer } from 'node:net';

export async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
