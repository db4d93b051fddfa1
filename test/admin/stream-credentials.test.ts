// Every /v1 stream is held to the credential that opened it (src/admin/open-streams.ts): a key
// deleted, or a session ended, on one instance closes the streams it opened on another instance
// sharing the store within a second, with no signal between them but the store itself.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { readEvents } from '../helpers/sse.js';
import { ADMIN_TOKEN, call, createKey, signIn, startAccessServer } from './access-helpers.js';

const servers: TestServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function twoInstances(): Promise<[TestServer, TestServer]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'callbridge-streams-'));
  dirs.push(dataDir);
  const a = await startAccessServer({ DATA_DIR: dataDir, INSTANCE_ID: 'a' });
  const b = await startAccessServer({ DATA_DIR: dataDir, INSTANCE_ID: 'b' });
  servers.push(a, b);
  return [a, b];
}

async function closedWithin(done: Promise<unknown>, limitMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    done.then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), limitMs);
    }),
  ]);
  clearTimeout(timer);
  return outcome;
}

describe('streams held to their credential', () => {
  it('closes on one instance the feeds of a key deleted on another, and of a session ended there', async () => {
    const [a, b] = await twoInstances();
    const key = await createKey(a, 'viewer', 'fleet viewer');
    const other = await createKey(a, 'viewer', 'fleet other');
    const session = await signIn(a, other);
    const byKey = await readEvents(`${b.baseUrl}/v1/calls/live/events`, { authorization: `Bearer ${key}` });
    const bySession = await readEvents(`${b.baseUrl}/v1/calls/live/events`, { cookie: session.cookie });
    expect([byKey.status, bySession.status]).toEqual([200, 200]);

    const id = key.split('_')[1]!;
    expect((await call(a, 'DELETE', `/v1/keys/${id}`, { bearer: ADMIN_TOKEN })).status).toBe(204);
    expect(await closedWithin(byKey.done, 1_000)).toBe(true);

    const out = await call(a, 'DELETE', '/v1/session', { cookie: session.cookie, csrf: session.csrf });
    expect(out.status).toBe(204);
    expect(await closedWithin(bySession.done, 1_000)).toBe(true);
  });
});
