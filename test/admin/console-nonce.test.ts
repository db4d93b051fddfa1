// index.html gets a fresh nonce on every answer, put where the build left its placeholder and named
// in that answer's style-src, so the waveform widget's one style element applies without
// 'unsafe-inline'; other files keep the policy without a nonce.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { ENV } from './access-helpers.js';

const INDEX =
  '<!doctype html><meta property="csp-nonce" nonce="__CSP_NONCE__">' +
  '<script type="module" src="/console/assets/app.js" nonce="__CSP_NONCE__"></script>';

const servers: TestServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function start(): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'callbridge-console-nonce-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), INDEX);
  writeFileSync(join(dir, 'assets', 'app.js'), 'console.log(1)');
  const server = await startServer(ENV, { consoleDir: dir });
  servers.push(server);
  return server;
}

async function page(server: TestServer, path: string) {
  const res = await fetch(`${server.baseUrl}${path}`);
  const body = await res.text();
  const nonce = /nonce="([^"]+)"/.exec(body)?.[1];
  return { res, body, nonce, csp: res.headers.get('content-security-policy') ?? '' };
}

describe('the console page nonce', () => {
  it('puts one fresh nonce in the page and in its style-src, on every route of the app', async () => {
    const server = await start();
    const seen = new Set<string>();
    for (const path of ['/console', '/console/', '/console/calls/CA1', '/console']) {
      const { res, body, nonce, csp } = await page(server, path);
      expect(res.status, path).toBe(200);
      expect(body).not.toContain('__CSP_NONCE__');
      expect(nonce).toMatch(/^[A-Za-z0-9+/]{22}==$/);
      // Every placeholder got the same nonce, and the policy names exactly it.
      expect(body.match(/nonce="([^"]+)"/g)).toEqual([`nonce="${nonce}"`, `nonce="${nonce}"`]);
      expect(csp).toContain(`style-src 'self' 'nonce-${nonce}';`);
      expect(csp).toContain("script-src 'self';");
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
      expect(res.headers.get('cache-control')).toBe('no-store');
      seen.add(nonce!);
    }
    expect(seen.size).toBe(4);
  });

  it('sends assets under the policy without a nonce', async () => {
    const server = await start();
    const res = await fetch(`${server.baseUrl}/console/assets/app.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toMatch(/style-src 'self';/);
    expect(res.headers.get('content-security-policy')).not.toContain('nonce-');
  });
});
