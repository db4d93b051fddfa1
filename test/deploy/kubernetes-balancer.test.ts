// The Kubernetes balancer's site (deploy/kubernetes/base/balancer/callbridge.conf.template) in the
// real nginx, filled in as the nginx image's entrypoint fills it, with a stand-in for the cluster's
// DNS: the callbridge Service resolves to the ready pods, each pod has its own name under the
// headless Service. Webhooks spread over the pods; a media stream reaches the pod its URL names;
// one naming a pod that does not exist, or cannot be reached, reaches another; a name no pod can
// have is never looked up. Needs nginx; skipped, saying so, without it.
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type FakeDns, startFakeDns } from '../helpers/fake-dns.js';
import { freePort } from '../helpers/free-port.js';
import { NGINX, type Nginx, startNginx } from '../helpers/nginx.js';
import { type FakeInstance, startFakeInstance } from './fake-instance.js';

if (!NGINX)
  console.warn('skipping test/deploy/kubernetes-balancer.test.ts: nginx not found (apt-get install nginx)');

const ROOT = join(import.meta.dirname, '../..');
const TEMPLATE = join(ROOT, 'deploy/kubernetes/base/balancer/callbridge.conf.template');
const NAMESPACE = 'callbridge-eu';
const SERVICE = `callbridge.${NAMESPACE}.svc.cluster.local`;
const pod = (name: string) => `${name}.callbridge-pods.${NAMESPACE}.svc.cluster.local`;
/** Each pod on a loopback address of its own, all on one port, as pods share the container port. */
const PODS = [
  { name: 'callbridge-0', host: '127.0.0.2' },
  { name: 'callbridge-1', host: '127.0.0.3' },
  { name: 'callbridge-2', host: '127.0.0.4' },
];

/** What the image's 20-envsubst-on-templates.sh does: fills ${NAME} for the names set in the environment. */
function envsubst(template: string, env: Record<string, string>): string {
  return template.replace(/\$\{(\w+)\}/g, (whole, name: string) => env[name] ?? whole);
}

/** Three pods on one port: a port free on the first address, taken on the others too, or another try. */
async function startPods(): Promise<FakeInstance[]> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const port = await freePort(PODS[0]!.host);
    const started: FakeInstance[] = [];
    try {
      for (const { name, host } of PODS) started.push(await startFakeInstance(name, { host, port }));
      return started;
    } catch {
      await Promise.all(started.map((instance) => instance.close()));
    }
  }
  throw new Error('no port free on every pod address');
}

function post(base: string, path: string) {
  return new Promise<{ status: number; instance?: string }>((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { method: 'POST', agent: false, timeout: 5_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { instance?: string };
        resolve({ status: res.statusCode ?? 0, instance: body.instance });
      });
    });
    req.on('error', reject);
    req.end('{}');
  });
}

async function openMedia(nginx: Nginx, path: string): Promise<string> {
  const socket = new WebSocket(`${nginx.wsUrl}${path}`);
  try {
    const greeting = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no greeting on ${path}`)), 5_000);
      socket.once('message', (data) => {
        clearTimeout(timer);
        resolve(String(data));
      });
      socket.once('error', reject);
    });
    const { instance, url } = JSON.parse(greeting) as { instance: string; url: string };
    expect(url).toBe(path);
    return instance;
  } finally {
    socket.close();
  }
}

describe.skipIf(!NGINX)('the Kubernetes balancer, against a stand-in cluster DNS', () => {
  let pods: FakeInstance[];
  let dns: FakeDns;
  let nginx: Nginx;

  beforeAll(async () => {
    pods = await startPods();
    dns = await startFakeDns();
    dns.set(
      SERVICE,
      PODS.map((p) => p.host),
    );
    for (const { name, host } of PODS) dns.set(pod(name), [host]);
    const port = await freePort();
    const site = envsubst(readFileSync(TEMPLATE, 'utf8'), {
      POD_NAMESPACE: NAMESPACE,
      CLUSTER_DOMAIN: 'cluster.local',
      UPSTREAM_PORT: pods[0]!.address.split(':')[1]!,
      NGINX_LOCAL_RESOLVERS: dns.address,
    });
    expect(site).not.toMatch(/\$\{\w+\}/);
    expect(site).toContain('listen 8080;');
    nginx = await startNginx(port, site.replace('listen 8080;', `listen 127.0.0.1:${port};`));
  });
  afterAll(async () => {
    await nginx?.stop();
    await dns?.close();
    await Promise.all((pods ?? []).map((instance) => instance.close()));
  });

  it('spreads webhooks over the pods the callbridge Service resolves to', async () => {
    const reached = new Set<string>();
    for (let i = 0; i < 24; i++) {
      const { status, instance } = await post(
        nginx.baseUrl,
        i % 2 ? '/webhooks/code' : '/carriers/twilio/voice',
      );
      expect(status).toBe(200);
      reached.add(instance!);
    }
    expect([...reached].sort()).toEqual(PODS.map((p) => p.name));
  });

  it('routes a media stream to the pod its URL names', async () => {
    for (const { name } of PODS) {
      for (let i = 0; i < 3; i++)
        expect(await openMedia(nginx, `/media/twilio/${name}/token-${i}`)).toBe(name);
    }
  });

  it('carries a stream naming a pod that does not exist to some pod', async () => {
    const reached = await openMedia(nginx, '/media/twilio/callbridge-7/token');
    expect(PODS.map((p) => p.name)).toContain(reached);
    expect(dns.queries).toContain(pod('callbridge-7'));
  });

  it('carries a stream whose pod resolves but does not answer to some pod', async () => {
    dns.set(pod('callbridge-9'), ['127.0.0.9']);
    const reached = await openMedia(nginx, '/media/telnyx/callbridge-9/token');
    expect(PODS.map((p) => p.name)).toContain(reached);
  });

  it('never looks up a name no pod of the StatefulSet can have', async () => {
    for (const name of ['evil.example.com', 'callbridge-pods', 'other-0', 'callbridge-12345']) {
      const reached = await openMedia(nginx, `/media/twilio/${name}/token`);
      expect(PODS.map((p) => p.name)).toContain(reached);
    }
    expect(dns.queries.filter((q) => !q.endsWith(`.${NAMESPACE}.svc.cluster.local`))).toEqual([]);
    expect(dns.queries.filter((q) => /evil|other-0|callbridge-12345/.test(q))).toEqual([]);
  });
});
