// The listen address and this instance's name: both checked here, so a typo stops the process
// with one line naming the variable instead of failing later at `listen` or in a media URL.
import { isIP } from 'node:net';
import { type Env, envError, envString } from './env.js';

const HOST_LABEL = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$/;

/** An IPv4 or IPv6 address, or a DNS host name (RFC 1123); dotted digits must be a real IPv4 address. */
export function isListenHost(value: string): boolean {
  if (isIP(value) !== 0) return true;
  if (value.length > 253) return false;
  const labels = value.replace(/\.$/, '').split('.');
  // `999.1.1.1` is all digits: meant as an address, and not a valid one.
  if (/^\d+$/.test(labels[labels.length - 1] ?? '')) return false;
  return labels.every((label) => HOST_LABEL.test(label));
}

/**
 * `HOST`, else loopback in development (webhooks may be unverified there, so only this machine
 * reaches them) and every interface under `NODE_ENV=production`, where a container must be reachable.
 */
export function readHost(env: Env, nodeEnv: string): string {
  const host = envString(env, 'HOST') ?? (nodeEnv === 'production' ? '0.0.0.0' : '127.0.0.1');
  if (!isListenHost(host)) throw envError('HOST', 'must be an IP address or a host name', host);
  return host;
}

/** Instance names go into media URL paths (`/media/<carrier>/<instance>/…`), record fields and labels. */
const INSTANCE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** `INSTANCE_ID`, or the host name (a pod's name under Kubernetes); either must be path-safe. */
export function readInstanceId(env: Env, hostname: string): string {
  const explicit = envString(env, 'INSTANCE_ID');
  const id = explicit ?? hostname;
  if (!INSTANCE_ID.test(id)) {
    const problem =
      'must be 1 to 128 letters, digits, dots, hyphens or underscores, starting with a letter or digit';
    throw explicit === undefined
      ? envError('INSTANCE_ID', `not set, and the host name cannot stand in for it: ${problem}`, id)
      : envError('INSTANCE_ID', problem, id);
  }
  return id;
}
