// The real nginx (Debian's package) as a child process, running the balancer configuration that
// deploy/nginx/render.mjs renders for the test's backends, from a temporary folder of its own:
// `nginx -p <dir> -c <dir>/nginx.conf -e <dir>/error.log -g 'daemon off; pid …;'`.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  generationOf,
  type Instance,
  renderBalancerConfig,
  syncReadiness,
} from '../../deploy/nginx/render.mjs';
import { findBinary } from './binaries.js';
import { freePort } from './free-port.js';

export const NGINX = findBinary('nginx');

/** The main context nginx needs around the rendered file: everything it writes stays in `dir`. */
function mainConfig(dir: string, include: string): string {
  const temp = (name: string) => join(dir, 'temp', name);
  return [
    'worker_processes 1;',
    'events { worker_connections 1024; }',
    'http {',
    '    access_log off;',
    `    client_body_temp_path ${temp('client_body')};`,
    `    proxy_temp_path ${temp('proxy')};`,
    `    fastcgi_temp_path ${temp('fastcgi')};`,
    `    uwsgi_temp_path ${temp('uwsgi')};`,
    `    scgi_temp_path ${temp('scgi')};`,
    `    include ${include};`,
    '}',
    '',
  ].join('\n');
}

/** A folder for one nginx: its config, logs and temp files. Workers may run as another user. */
function nginxDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'callbridge-nginx-'));
  chmodSync(dir, 0o755);
  for (const name of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) {
    mkdirSync(join(dir, 'temp', name), { recursive: true });
    chmodSync(join(dir, 'temp', name), 0o777);
  }
  return dir;
}

/** Checks a configuration for the http context with `nginx -t`; returns nginx's output and status. */
export function checkHttpConfig(text: string): { ok: boolean; output: string } {
  const dir = nginxDir();
  try {
    writeFileSync(join(dir, 'site.conf'), text);
    writeFileSync(join(dir, 'nginx.conf'), mainConfig(dir, join(dir, 'site.conf')));
    const result = spawnSync(
      NGINX!,
      [
        '-t',
        '-p',
        `${dir}/`,
        '-c',
        join(dir, 'nginx.conf'),
        '-e',
        join(dir, 'error.log'),
        '-g',
        `pid ${join(dir, 'nginx.pid')};`,
      ],
      { encoding: 'utf8', timeout: 10_000 },
    );
    return { ok: result.status === 0, output: `${result.stdout}${result.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface Nginx {
  baseUrl: string;
  wsUrl: string;
  /** Sends SIGHUP: nginx re-reads its configuration, old workers finish what they carry. */
  reload(): void;
  exited(): boolean;
  /** The error log so far, for failure messages. */
  errorLog(): string;
  stop(): Promise<void>;
}

/**
 * Runs nginx with `site`, a configuration for the http context listening on `port`; resolves once
 * /balancer/healthz answers 200. `siteFile` is where the site is: rewrite it, then reload.
 */
export async function startNginx(port: number, site: string): Promise<Nginx & { siteFile: string }> {
  if (!NGINX) throw new Error('nginx not found');
  const dir = nginxDir();
  const siteFile = join(dir, 'site.conf');
  writeFileSync(siteFile, site);
  writeFileSync(join(dir, 'nginx.conf'), mainConfig(dir, siteFile));
  const child: ChildProcess = spawn(
    NGINX,
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
  const baseUrl = `http://127.0.0.1:${port}`;
  const errorLog = () => {
    try {
      return readFileSync(join(dir, 'error.log'), 'utf8');
    } catch {
      return '';
    }
  };
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited (${child.exitCode}):\n${errorLog()}`);
    const res = await fetch(`${baseUrl}/balancer/healthz`, { signal: AbortSignal.timeout(1_000) }).catch(
      () => null,
    );
    if (res?.status === 200) break;
    if (Date.now() > deadline) throw new Error(`nginx did not answer on ${baseUrl}:\n${errorLog()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    baseUrl,
    wsUrl: baseUrl.replace(/^http/, 'ws'),
    siteFile,
    reload: () => child.kill('SIGHUP'),
    exited: () => child.exitCode !== null,
    errorLog,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        // SIGTERM: fast shutdown, open WebSockets included.
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Balancer extends Nginx {
  /** The generation the rendered configuration announces at /balancer/healthz. */
  generation(): Promise<string>;
  /**
   * One round of the readiness watch deploy/nginx/render.mjs runs: probes every backend's /readyz,
   * re-renders, reloads nginx, and waits until the new configuration answers.
   */
  syncReadiness(): Promise<Instance[]>;
}

/** The VM balancer deploy/nginx/render.mjs renders for `instances`, in the real nginx (on `at.port` if given). */
export async function startBalancer(instances: Instance[], at: { port?: number } = {}): Promise<Balancer> {
  const port = at.port ?? (await freePort());
  const site = { listen: `127.0.0.1:${port}` };
  const nginx = await startNginx(port, renderBalancerConfig(instances, site));
  const generation = async () => {
    const res = await fetch(`${nginx.baseUrl}/balancer/healthz`, { signal: AbortSignal.timeout(2_000) });
    return (await res.text()).trim().replace(/^ok /, '');
  };
  const waitForGeneration = async (expected: string) => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (nginx.exited()) throw new Error(`nginx exited:\n${nginx.errorLog()}`);
      if ((await generation().catch(() => '')) === expected) return;
      if (Date.now() > deadline)
        throw new Error(`nginx did not serve generation ${expected}:\n${nginx.errorLog()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  await waitForGeneration(generationOf(instances));

  let current: Instance[] = instances;
  return {
    ...nginx,
    generation,
    async syncReadiness() {
      let reloaded = false;
      const probed = await syncReadiness({
        instances: current,
        site,
        out: nginx.siteFile,
        previous: current,
        reload: async () => {
          nginx.reload();
          reloaded = true;
        },
      });
      if (reloaded) await waitForGeneration(generationOf(probed));
      current = probed;
      return probed;
    },
  };
}
