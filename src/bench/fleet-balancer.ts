// The real nginx in front of the fleet benchmark's instances, configured by deploy/nginx/render.mjs
// (with instance routing), or the same site with media streams spread like webhooks (without it).
// Everything nginx writes stays in a temporary folder of its own.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './children.js';
import { PACKAGE_ROOT } from './processes.js';

interface Renderer {
  renderBalancerConfig(instances: Array<{ name: string; address: string }>, site: { listen: string }): string;
}

export interface Balancer {
  url: string;
  stop(): Promise<void>;
}

export function findNginx(): string | null {
  for (const candidate of ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/bin/nginx']) {
    if (existsSync(candidate)) return candidate;
  }
  const found = spawnSync('sh', ['-c', 'command -v nginx'], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() || null : null;
}

export async function startBalancer(
  instances: Array<{ name: string; address: string }>,
  opts: { routing: boolean; port?: number },
): Promise<Balancer> {
  const nginx = findNginx();
  if (!nginx) throw new Error('nginx not found (Debian: apt-get install nginx)');
  // Outside src/: loaded at run time from the package, as operators run it.
  const renderer = (await import(join(PACKAGE_ROOT, 'deploy/nginx/render.mjs'))) as Renderer;
  const port = opts.port ?? (await freePort());
  let site = renderer.renderBalancerConfig(instances, { listen: `127.0.0.1:${port}` });
  if (!opts.routing) {
    site = site.replace('proxy_pass http://$callbridge_media_upstream;', 'proxy_pass http://callbridge;');
  }
  const dir = mkdtempSync(join(tmpdir(), 'callbridge-bench-nginx-'));
  chmodSync(dir, 0o755);
  const temp = (name: string) => join(dir, 'temp', name);
  for (const name of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) {
    mkdirSync(temp(name), { recursive: true });
    chmodSync(temp(name), 0o777);
  }
  writeFileSync(join(dir, 'site.conf'), site);
  writeFileSync(
    join(dir, 'nginx.conf'),
    [
      'worker_processes 1;',
      'worker_rlimit_nofile 16384;',
      'events { worker_connections 8192; }',
      'http {',
      '    access_log off;',
      ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((n) => `    ${n}_temp_path ${temp(n)};`),
      `    include ${join(dir, 'site.conf')};`,
      '}',
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(
    nginx,
    [
      '-p',
      `${dir}/`,
      '-c',
      join(dir, 'nginx.conf'),
      '-e',
      join(dir, 'error.log'),
      '-g',
      `daemon off; pid ${join(dir, 'nginx.pid')};`,
    ],
    { stdio: 'ignore' },
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`nginx exited: ${readFileSync(join(dir, 'error.log'), 'utf8')}`);
    const ok = await fetch(`${url}/balancer/healthz`, { signal: AbortSignal.timeout(1_000) })
      .then((res) => res.status === 200)
      .catch(() => false);
    if (ok) break;
    if (Date.now() > deadline) throw new Error('nginx did not answer');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
