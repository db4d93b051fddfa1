// A server killed with SIGKILL while events wait on the queue loses none and repeats none: after a
// restart on the same DATA_DIR each event reaches the operator gateway exactly once. Runs the real
// entry point (dist/main.js; `npm run build` first).
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { disposeAll, ensureBuilt, freePort, spawnServer } from '../../helpers/server-process.js';
import { waitUntil } from '../helpers.js';
import { type FixedPortGateway, operatorGatewayAt } from '../operator-at.js';
import { CODE_SECRET, queueWorkflowRun } from './deliveries.js';

describe('queued events across a SIGKILL', () => {
  beforeAll(ensureBuilt, 120_000);
  let dataDir: string;
  let operator: FixedPortGateway | undefined;
  afterEach(async () => {
    await disposeAll();
    await operator?.close();
    operator = undefined;
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it(
    'delivers each queued event exactly once after the process is killed and restarted',
    {
      timeout: 90_000,
    },
    async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'callbridge-process-'));
      const operatorPort = await freePort();
      const env = {
        DATA_DIR: dataDir,
        WEBHOOK_SECRET_CODE: CODE_SECRET,
        QUEUE_PILOTS: 'code',
        // Down for now: every delivery attempt fails, so the events stay queued.
        OPERATOR_GATEWAY_URL: `http://127.0.0.1:${operatorPort}/events`,
      };

      const first = await spawnServer(env);
      const deliveries = Array.from({ length: 8 }, () => randomUUID());
      for (const delivery of deliveries) {
        const res = await queueWorkflowRun(first.baseUrl, delivery);
        expect(res.status, first.output()).toBe(202);
      }
      // Each enqueue wakes the drainer; let those attempts fail (connection refused, a few ms) so the
      // kill finds the events waiting for their retry rather than in flight.
      await new Promise((resolve) => setTimeout(resolve, 500));
      await first.kill('SIGKILL');

      operator = await operatorGatewayAt(operatorPort);
      const second = await spawnServer(env);
      // Were an attempt cut short by the kill after all, its event would follow once the lease lapses (30 s).
      await waitUntil(
        () => (operator?.received.length ?? 0) >= deliveries.length,
        60_000,
        `${deliveries.length} deliveries\n${second.output()}`,
      );
      // Anything extra would arrive within a few backoff periods.
      await new Promise((resolve) => setTimeout(resolve, 2_500));

      const keys = operator.received.map((r) => r.key).sort();
      expect(keys).toEqual(deliveries.map((d) => `code:${d}`).sort());
      expect(new Set(operator.received.map((r) => r.name))).toEqual(new Set(['code/workflow_run.completed']));

      // And a provider's redelivery after the restart is a duplicate, not a new event.
      const again = await queueWorkflowRun(second.baseUrl, deliveries[0]!);
      expect(await again.json()).toEqual({ status: 'duplicate' });
    },
  );
});
