// Runs a notification function and times it: shared by direct forwarding and the queue drainer.
import type { Metrics } from '../metrics/metrics.js';
import type { NormalizedEvent, NotificationFunction } from './provider.js';

export async function forwardEvent(event: NormalizedEvent, notify: NotificationFunction, metrics: Metrics) {
  const stop = metrics.webhookForwardDuration.startTimer({ provider: event.provider });
  try {
    await notify(event);
    stop({ outcome: 'ok' });
  } catch (err) {
    stop({ outcome: 'failed' });
    throw err;
  }
}

/** A short, secret-free reason for logs and dead letters. */
export function describeError(err: unknown): string {
  if (err instanceof Error) {
    const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
    // Our own errors say what they are in their message; a foreign one is named by its class.
    const ours = err.name === 'Error' || typeof (err as { code?: unknown }).code === 'string';
    return `${ours ? '' : `${err.name}: `}${err.message}${cause}`.slice(0, 500);
  }
  return String(err).slice(0, 500);
}
