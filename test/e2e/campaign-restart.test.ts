// A server stopped in the middle of a campaign and started again on the same data folder: the
// campaign goes on where it was, no contact is dialed twice, and none is forgotten. The calls the
// stopped server had in flight are read back from the carrier (here its simulated carrier, gone
// with it, knows none of them: they end as failed, never redialed).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { adminRequest } from '../helpers/admin-request.js';
import { disposeAll, ensureBuilt, type ServerProcess, spawnServer } from '../helpers/server-process.js';

const TOKEN = 'admin-token-for-campaign-restart';
const dataDir = mkdtempSync(join(tmpdir(), 'callbridge-campaign-restart-'));

afterAll(async () => {
  await disposeAll();
  rmSync(dataDir, { recursive: true, force: true });
});

interface ContactView {
  phone: string;
  state: string;
  outcome: string | null;
  attempts: Array<{ callSid: string | null; reason: string | null }>;
}

const env = { ADMIN_TOKEN: TOKEN, DATA_DIR: dataDir, SIM_CALLEE_SPEEDUP: '20' };

function admin(server: ServerProcess, path: string, body?: unknown, type?: string) {
  return adminRequest(server.baseUrl, TOKEN, path, body, type);
}

async function progress(server: ServerProcess, id: string) {
  return (await (await admin(server, `/campaigns/${id}`)).json()) as {
    state: string;
    progress: { contacts: Record<string, number> };
  };
}

describe('a restart mid-campaign', () => {
  it('dials no one twice and forgets no one', async () => {
    await ensureBuilt();
    const first = await spawnServer(env);
    // Busy lines and failures: quick calls, so the campaign is paced, not waiting on calls.
    const phones = [70, 90].flatMap((base) =>
      Array.from({ length: 10 }, (_, i) => `+1212555${String(100 + base + i).padStart(4, '0')}`),
    );
    const created = await admin(first, '/campaigns', {
      name: 'restart',
      pacing: { callsPerSecond: 2, maxConcurrent: 5 },
      retry: { maxAttempts: 1, delaySeconds: 0, on: ['busy'] },
    });
    const { id } = (await created.json()) as { id: string };
    await admin(first, `/campaigns/${id}/contacts`, `phone\n${phones.join('\n')}\n`, 'text/csv');
    expect((await admin(first, `/campaigns/${id}/start`, {})).status).toBe(200);
    // Stop it once some contacts are done and some are not.
    let done = 0;
    for (let i = 0; i < 200 && done < 4; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      done = (await progress(first, id)).progress.contacts.done ?? 0;
    }
    expect(done).toBeGreaterThanOrEqual(4);
    await first.kill('SIGTERM');

    const second = await spawnServer(env);
    let state = '';
    // The stopped dialer's open attempts wait for its heartbeat to lapse (20 s) before adoption.
    const deadline = Date.now() + 120_000;
    while (state !== 'completed' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      state = (await progress(second, id)).state;
    }
    expect(state, second.output()).toBe('completed');
    const page = (await (await admin(second, `/campaigns/${id}/contacts?limit=100`)).json()) as {
      contacts: ContactView[];
    };
    expect(page.contacts).toHaveLength(20);
    for (const contact of page.contacts) {
      expect(contact.state, contact.phone).toBe('done');
      expect(contact.attempts, contact.phone).toHaveLength(1);
    }
    const sids = page.contacts.map((contact) => contact.attempts[0]!.callSid);
    expect(new Set(sids).size).toBe(20);
  }, 180_000);
});
