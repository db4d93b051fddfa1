// deploy/nginx/render.mjs as operators run it: the rendering on stdout, one-line errors for bad
// arguments, and the readiness watch rewriting the site and running the reload command each time
// an instance's /readyz changes its answer.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { renderBalancerConfig } from '../../deploy/nginx/render.mjs';
import { type FakeInstance, startFakeInstance } from './fake-instance.js';

const ROOT = join(import.meta.dirname, '../..');
const RENDER = join(ROOT, 'deploy/nginx/render.mjs');
const run = (args: string[]) =>
  spawnSync(process.execPath, [RENDER, ...args], { encoding: 'utf8', timeout: 10_000 });

async function until(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('deploy/nginx/render.mjs', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('prints the site for the instances it is given', () => {
    const result = run(['--listen', '8443', 'a=10.0.0.1:8080', 'b=10.0.0.2:8080']);
    expect(result.status).toBe(0);
    expect(result.stdout).toBe(
      renderBalancerConfig(
        [
          { name: 'a', address: '10.0.0.1:8080', ready: true },
          { name: 'b', address: '10.0.0.2:8080', ready: true },
        ],
        { listen: '8443' },
      ),
    );
  });

  it('refuses bad arguments with one line naming the problem', () => {
    for (const args of [
      [],
      ['no-address'],
      ['a=10.0.0.1'],
      ['--listen', 'eighty', 'a=10.0.0.1:8080'],
      ['--tls-certificate', '/etc/ssl/x.pem', 'a=10.0.0.1:8080'],
      ['--watch', 'a=10.0.0.1:8080'],
    ]) {
      const result = run(args);
      expect(result.status, args.join(' ')).toBe(1);
      expect(result.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(result.stderr).toMatch(/^render\.mjs: /);
    }
  });

  it('rewrites the site and reloads whenever an instance changes its readiness', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'callbridge-render-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const instances: FakeInstance[] = await Promise.all(
      ['one', 'two'].map((name) => startFakeInstance(name)),
    );
    cleanups.push(() => Promise.all(instances.map((i) => i.close())).then(() => {}));
    const out = join(dir, 'callbridge.conf');
    const reloads = join(dir, 'reloads');
    const watch: ChildProcess = spawn(
      process.execPath,
      [
        RENDER,
        '--watch',
        '--interval-ms',
        '100',
        '--out',
        out,
        // Appends one line per reload, so the test can count them.
        '--reload',
        `sh -c ${'echo>>' + reloads}`,
        ...instances.map((i) => `${i.name}=${i.address}`),
      ],
      { stdio: 'ignore' },
    );
    cleanups.push(() => {
      watch.kill('SIGTERM');
    });
    const reloadCount = () =>
      existsSync(reloads) ? readFileSync(reloads, 'utf8').split('\n').length - 1 : 0;
    const site = () => (existsSync(out) ? readFileSync(out, 'utf8') : '');

    await until('the first rendering', () => reloadCount() === 1 && site().includes('# two'));
    expect(site()).not.toContain(' down;');

    instances[1]!.setReady(false);
    await until('two marked down', () => reloadCount() === 2);
    expect(site()).toMatch(new RegExp(`server ${instances[1]!.address} max_fails=3 fail_timeout=10s down;`));

    // Nothing changes: no rewrite, no reload.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(reloadCount()).toBe(2);

    instances[1]!.setReady(true);
    await until('two back', () => reloadCount() === 3);
    expect(site()).not.toContain(' down;');
  });
});
