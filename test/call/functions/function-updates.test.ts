// A profile HTTP function whose answer asks for an agent update (src/agent/updates.ts): the call
// gets the update to send, the agent reads the answer without it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runFunction } from '../../../src/call/functions/functions.js';
import { loadProfile, MINIMAL_PROFILE, removeProjects } from '../../config/project.js';

let server: Server | undefined;

afterEach(async () => {
  removeProjects();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function answering(status: number, body: unknown): Promise<string> {
  server = createServer((req, res) => {
    req.resume();
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/fn`;
}

function context(url: string, mayUpdate?: string[]) {
  const profile = loadProfile({
    ...MINIMAL_PROFILE,
    functions: [
      { name: 'set_language', description: 'Switches language.', url, ...(mayUpdate ? { mayUpdate } : {}) },
    ],
  });
  return {
    callSid: 'CA1',
    from: '+15550100001',
    to: '+15550100002',
    profileName: 'default',
    profile,
    canTransfer: false,
    endCall: () => {},
    transfer: () => {},
  };
}

const entry = { id: 'fc_1', name: 'set_language', arguments: '{"language":"es"}', client_side: true };
const SPANISH = {
  speak: { provider: { type: 'speech', version: 'v2', model: 'turn-luna-es' } },
  listen: { provider: { type: 'speech', model: 'std-3' } },
};

describe('functions that update the agent', () => {
  it('hands back the updates the function may make and the answer without them', async () => {
    const url = await answering(200, { ok: true, language: 'es', update: SPANISH });
    const result = await runFunction(entry, context(url, ['speak', 'listen']));
    expect(result.outcome).toBe('ok');
    expect(JSON.parse(result.content)).toEqual({ ok: true, language: 'es' });
    expect(result.updates).toEqual([
      { type: 'UpdateSpeak', speak: SPANISH.speak },
      { type: 'UpdateListen', listen: SPANISH.listen },
    ]);
  });

  it('tells the agent an update was refused when the profile does not allow it', async () => {
    const url = await answering(200, { ok: true, update: SPANISH });
    const result = await runFunction(entry, context(url));
    expect(result.updates).toBeUndefined();
    expect(JSON.parse(result.content)).toEqual({
      ok: true,
      update_refused: [
        'speak updates are not allowed for this function',
        'listen updates are not allowed for this function',
      ],
    });
  });

  it('never reads an update out of a failed answer', async () => {
    const url = await answering(500, { update: SPANISH });
    const result = await runFunction(entry, context(url, ['speak', 'listen']));
    expect(result.outcome).toBe('error');
    expect(result.updates).toBeUndefined();
  });
});
