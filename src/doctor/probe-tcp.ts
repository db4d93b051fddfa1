// Reachability of an HTTP endpoint by a TCP connect to its host and port: enough to catch a wrong
// host, a closed port or a firewall, without sending the endpoint a request it would act on.
import { connect } from 'node:net';
import { describeNetworkError } from './network-error.js';
import { type CheckLine, fail, ok } from './report.js';

export async function probeTcp(label: string, rawUrl: string, timeoutMs: number): Promise<CheckLine> {
  const url = new URL(rawUrl);
  // Only where it points: a query string may carry a token.
  const shown = `${url.protocol}//${url.host}${url.pathname}`;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  try {
    await new Promise<void>((resolve, reject) => {
      const socket = connect({ host, port, timeout: timeoutMs });
      socket.once('connect', () => {
        socket.destroy();
        resolve();
      });
      socket.once('timeout', () => {
        socket.destroy();
        reject(Object.assign(new Error('timeout'), { name: 'TimeoutError' }));
      });
      socket.once('error', reject);
    });
    return ok(`${label} ${shown}: TCP connect to ${host}:${port} succeeded`);
  } catch (err) {
    return fail(
      `${label} ${shown}: TCP connect to ${host}:${port} failed: ${describeNetworkError(err, timeoutMs)}`,
    );
  }
}
