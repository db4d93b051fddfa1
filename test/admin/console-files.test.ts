// The console is served from its build with a strict Content-Security-Policy on every answer; the
// app's own routes get index.html, a missing asset a 404; without a build, /console says so.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { ENV } from './access-helpers.js';

const INDEX =
  '<!doctype html><title>callbridge</title><script type="module" src="/console/assets/app-1a2b.js"></script>';
const SCRIPT = 'console.log("console")';

const servers: TestServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function built(): string {
  const dir = mkdtempSync(join(tmpdir(), 'callbridge-console-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), INDEX);
  writeFileSync(join(dir, 'assets', 'app-1a2b.js'), SCRIPT);
  return dir;
}

async function start(consoleDir: string) {
  const server = await startServer(ENV, { consoleDir });
  servers.push(server);
  return server;
}

describe('/console', () => {
  it('serves the page, its assets and its client-side routes under a strict CSP', async () => {
    const server = await start(built());
    for (const path of ['/console', '/console/', '/console/calls/CA123', '/console/campaigns']) {
      const res = await fetch(`${server.baseUrl}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await res.text()).toBe(INDEX);
      const csp = res.headers.get('content-security-policy')!;
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("media-src 'self' blob:");
      expect(csp).toContain("connect-src 'self'");
      expect(csp).toContain("img-src 'self' data:");
      expect(csp).toContain("style-src 'self'");
      // Nothing from another origin, and no inline script.
      expect(csp).not.toMatch(/https?:|\*|unsafe-inline|unsafe-eval/);
    }
    const script = await fetch(`${server.baseUrl}/console/assets/app-1a2b.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect(script.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(await script.text()).toBe(SCRIPT);
  });

  it('answers 404 for a missing asset and never leaves the folder', async () => {
    const server = await start(built());
    const missing = await fetch(`${server.baseUrl}/console/assets/gone.js`);
    expect(missing.status).toBe(404);
    expect(await missing.text()).not.toContain('<!doctype');
    for (const path of ['/console/..%2F..%2Fpackage.json', '/console/%2e%2e/%2e%2e/package.json']) {
      const res = await fetch(`${server.baseUrl}${path}`);
      expect(await res.text()).not.toContain('"name": "callbridge"');
    }
  });

  it('says the console was not built with a 503 when dist/console is missing', async () => {
    const server = await start(join(tmpdir(), 'callbridge-no-console-here'));
    for (const path of ['/console', '/console/calls']) {
      const res = await fetch(`${server.baseUrl}${path}`);
      expect(res.status).toBe(503);
      expect(await res.text()).toMatch(/console was not built/);
    }
  });
});

describe('CSP violation reports', () => {
  const metric = async (server: TestServer, directive: string) => {
    const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
    const line = text
      .split('\n')
      .find(
        (l) => l.startsWith('callbridge_csp_violations_total{') && l.includes(`directive="${directive}"`),
      );
    return line === undefined ? null : Number(line.split(' ').pop());
  };

  it("names the server's own report route in every policy, and counts what browsers report there", async () => {
    // Issue 30: the console's CSP reported its violations nowhere.
    const server = await start(built());
    for (const path of ['/console', '/console/assets/app-1a2b.js']) {
      const res = await fetch(`${server.baseUrl}${path}`);
      expect(res.headers.get('content-security-policy')).toMatch(/; report-uri \/console\/csp-reports$/);
    }
    expect(await metric(server, 'script-src-elem')).toBe(0);
    // The report-uri format, then the Reporting API's, as Chromium sends them.
    const legacy = await fetch(`${server.baseUrl}/console/csp-reports`, {
      method: 'POST',
      headers: { 'content-type': 'application/csp-report' },
      body: JSON.stringify({
        'csp-report': {
          'document-uri': `${server.baseUrl}/console`,
          'effective-directive': 'script-src-elem',
          'blocked-uri': 'https://evil.example/x.js?session=secret',
        },
      }),
    });
    expect(legacy.status).toBe(204);
    const reporting = await fetch(`${server.baseUrl}/console/csp-reports`, {
      method: 'POST',
      headers: { 'content-type': 'application/reports+json' },
      body: JSON.stringify([
        { type: 'csp-violation', body: { effectiveDirective: 'style-src-attr', blockedURL: 'inline' } },
        { type: 'csp-violation', body: { effectiveDirective: 'made-up-directive' } },
        { type: 'deprecation', body: { id: 'x' } },
      ]),
    });
    expect(reporting.status).toBe(204);
    expect(await metric(server, 'script-src-elem')).toBe(1);
    expect(await metric(server, 'style-src-attr')).toBe(1);
    expect(await metric(server, 'other')).toBe(1);
    // Junk is answered and counts nothing.
    const junk = await fetch(`${server.baseUrl}/console/csp-reports`, {
      method: 'POST',
      headers: { 'content-type': 'application/csp-report' },
      body: '{not json',
    });
    expect(junk.status).toBe(204);
    expect(await metric(server, 'other')).toBe(1);
  });
});
