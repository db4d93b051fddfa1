// What `callbridge call` prints of the server's post-call analysis: nothing when the server does
// not analyse calls, the analysis once the record has it, a clear line when it cannot be shown.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { analysisReport } from '../../../src/sim/carrier/call-analysis.js';

const CALL_SID = 'CA0000000000000000000000000000cc01';
let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A server with `analysis` in its info, whose record gains its analysis after `readyAfter` reads. */
async function admin(
  analysis: 'on' | 'off' | undefined,
  readyAfter = 0,
  record: Record<string, unknown> = {},
) {
  let reads = 0;
  const seen: string[] = [];
  server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
    res.setHeader('content-type', 'application/json');
    if (req.url === '/') return res.end(JSON.stringify(analysis ? { name: 'callbridge', analysis } : {}));
    if (req.headers.authorization !== 'Bearer good') {
      res.statusCode = 401;
      return res.end('{"error":{"code":"CALLBRIDGE_UNAUTHORIZED","message":"no"}}');
    }
    reads++;
    if (reads <= readyAfter) return res.end(JSON.stringify({ callSid: CALL_SID }));
    return res.end(JSON.stringify({ callSid: CALL_SID, ...record }));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const report = (url: string, token: string | null = 'good', timeoutMs = 2_000) =>
  analysisReport({
    server: url,
    callSid: CALL_SID,
    token: token === null ? { value: null, why: 'no admin token: set ADMIN_TOKEN' } : { value: token },
    timeoutMs,
    intervalMs: 10,
  });

describe('callbridge call: the analysis', () => {
  it('waits until the record has its analysis, then prints summary, sentiment, topics and intents', async () => {
    const { url } = await admin('on', 3, {
      analysis: {
        outcome: 'ok',
        summary: 'The caller asked about hours.',
        sentiment: 'neutral',
        sentimentScore: 0.05,
        topics: ['opening hours'],
        intents: ['ask hours', 'book'],
        attempts: 1,
        at: '2026-01-01T00:00:00.000Z',
      },
    });
    expect(await report(url)).toEqual([
      'analysis:',
      '  summary:   The caller asked about hours.',
      '  sentiment: neutral (0.05)',
      '  topics:    opening hours',
      '  intents:   ask hours; book',
    ]);
  });

  it('prints a skipped or failed analysis with its reason', async () => {
    const { url } = await admin('on', 0, {
      analysis: { outcome: 'skipped', reason: 'nothing was said on the call', attempts: 0, at: 'x' },
    });
    expect(await report(url)).toEqual(['analysis: skipped (nothing was said on the call)']);
  });

  it('does not wait when the server does not analyse calls, or does not say', async () => {
    for (const mode of ['off', undefined] as const) {
      const { url, seen } = await admin(mode);
      expect(await report(url)).toEqual([]);
      expect(seen).toEqual(['GET / ']);
      server?.closeAllConnections();
      await new Promise<void>((resolve) => server!.close(() => resolve()));
      server = undefined;
    }
  });

  it('says why it cannot show the analysis: no token, a refused token, not ready in time', async () => {
    const { url } = await admin('on', 1_000_000);
    expect(await report(url, null)).toEqual(['analysis: not shown (no admin token: set ADMIN_TOKEN)']);
    expect((await report(url, 'wrong'))[0]).toMatch(/^analysis: not shown \(the admin API refused the token/);
    expect(await report(url, 'good', 100)).toEqual([
      `analysis: not ready after 0 s (GET /v1/calls/${CALL_SID} shows it later)`,
    ]);
  });
});
