// Telnyx is answered 200 at once (docs/protocols/telnyx.md section 2); what a webhook asks for runs
// after, through the REST API, bounded by its timeout, its failure logged and counted, never thrown.
import type { Logger } from 'pino';
import type { Metrics } from '../../metrics/metrics.js';
import type { TelnyxRest } from './rest.js';

export interface DeferredApi {
  /** Runs a REST request once the webhook has been answered; never throws. */
  after(operation: string, callSid: string, request: (api: TelnyxRest) => Promise<void>): void;
  /** Resolves once every request started so far has settled. */
  settled(): Promise<void>;
}

export function createDeferredApi(rest: TelnyxRest | null, log: Logger, metrics: Metrics): DeferredApi {
  const pending = new Set<Promise<void>>();
  return {
    after(operation, callSid, request) {
      if (rest === null) {
        log.error({ callSid, operation }, 'TELNYX_API_KEY is not set: the call cannot be controlled');
        return;
      }
      const task = new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => request(rest))
        .then(
          () => metrics.carrierApiRequests.inc({ carrier: 'telnyx', operation, outcome: 'ok' }),
          (err: Error) => {
            metrics.carrierApiRequests.inc({ carrier: 'telnyx', operation, outcome: 'failed' });
            log.warn({ callSid, operation, err: err.message }, 'telnyx request failed');
          },
        );
      pending.add(task);
      void task.finally(() => pending.delete(task));
    },
    async settled() {
      await Promise.allSettled([...pending]);
    },
  };
}
