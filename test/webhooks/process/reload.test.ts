// SIGHUP makes a running server re-read its secrets file: the new secret is accepted at once, the
// removed one refused, and the process keeps serving. Runs the real entry point (dist/main.js).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { disposeAll, ensureBuilt, spawnServer } from '../../helpers/server-process.js';
import { eventually, hmacOf } from '../helpers.js';

describe('secrets reload on SIGHUP', () => {
  beforeAll(ensureBuilt, 120_000);
  let dir: string;
  afterEach(async () => {
    await disposeAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it('swaps the webhook secrets without a restart', { timeout: 30_000 }, async () => {
    dir = mkdtempSync(join(tmpdir(), 'callbridge-process-'));
    const file = join(dir, 'secrets.json');
    writeFileSync(file, JSON.stringify({ deploy: ['before'] }));
    const server = await spawnServer({ DATA_DIR: dir, SECRETS_FILE: file });

    let n = 0;
    const send = (secret: string) => {
      const body = JSON.stringify({ id: `evt-${n++}`, type: 'deployment.created' });
      return fetch(`${server.baseUrl}/webhooks/deploy`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-deploy-signature': hmacOf('sha1', secret, body).toString('hex'),
        },
        body,
      }).then((r) => r.status);
    };
    expect(await send('before')).toBe(200);

    writeFileSync(file, JSON.stringify({ deploy: ['after'] }));
    server.child.kill('SIGHUP');
    expect(
      await eventually(
        () => send('after'),
        (status) => status === 200,
        'the new secret',
      ),
    ).toBe(200);
    expect(await send('before')).toBe(403);
    expect(server.child.exitCode).toBeNull();
  });
});
