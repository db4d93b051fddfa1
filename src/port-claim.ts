// The listening port, taken before anything else (docs/security.md, "Files in DATA_DIR"): a second `npm start`
// on a busy port must fail before it writes a byte under DATA_DIR, where a running server keeps
// its admin token, its database and the simulated carrier's keys. The socket bound here is the one
// the server later listens on (handed over, never closed and bound again), so no other process can
// take the port in between.
import { createServer, type Server } from 'node:net';

/** Why binding failed, in words that name the setting to change. */
const BIND_FAILURES: Record<string, string> = {
  EADDRINUSE: 'the port is already in use (stop the other process, or set PORT)',
  EACCES: 'permission denied (ports below 1024 need privileges: set PORT)',
  EADDRNOTAVAIL: 'this machine has no such address (set HOST)',
};

export interface PortClaim {
  /** The port bound (the one asked for, or the one the system chose for port 0). */
  port: number;
  /** Options for `listen` that make the HTTP server take over this very socket. */
  listenOptions(): { port: number; host: string; _handle: unknown };
}

/** A bind failure as one line for the operator, or null when it is not one of the known causes. */
export function describeBindFailure(err: unknown): string | null {
  return BIND_FAILURES[(err as NodeJS.ErrnoException).code ?? ''] ?? null;
}

/**
 * Binds `host:port` exclusively. Connections that arrive before the server is ready are closed at
 * once (as a refused connection would be), so a health check retries rather than waits.
 */
export async function claimPort(port: number, host: string): Promise<PortClaim> {
  const holder: Server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    holder.once('error', reject);
    holder.listen({ port, host, exclusive: true }, () => {
      holder.removeListener('error', reject);
      resolve();
    });
  });
  const address = holder.address();
  const bound = typeof address === 'object' && address !== null ? address.port : port;
  return {
    port: bound,
    // net.Server#listen takes over a bound handle given as `_handle` (Node's documented
    // `listen(handle)` form, "an object with a _handle member"); Fastify passes its options through.
    listenOptions: () => ({
      port: bound,
      host,
      _handle: (holder as unknown as { _handle: unknown })._handle,
    }),
  };
}
