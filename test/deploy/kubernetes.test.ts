// Every overlay of deploy/kubernetes rendered by the real `kubectl kustomize` and every object in it
// validated against the Kubernetes API schemas (kubernetes-models, and
// @kubernetes-models/prometheus-operator for ServiceMonitor and PrometheusRule), with no field its
// kind does not declare; then what the fleet relies on, read from the rendered objects: the
// region's settings and Redis, probes on /readyz and /healthz, a grace period that outlasts the
// drain, instance routing by pod name, secrets by reference only, autoscaling on calls per pod.
// Needs kubectl; skipped, saying so, without it.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/carriers/load-config.js';
import { REGIONS } from '../../src/config/types.js';
import { findBinary } from '../helpers/binaries.js';
import { FAREWELL_WAIT_MS } from './drain.js';
import { fieldChecker, type KubeObject, schemaProblems } from './kubernetes-schema.js';

const ROOT = join(import.meta.dirname, '../..');
const KUBECTL = findBinary('kubectl');
if (!KUBECTL)
  console.warn(
    'skipping test/deploy/kubernetes.test.ts: kubectl not found (apt-get install kubernetes-client)',
  );

/** A copy of deploy/kubernetes whose overlays name their base under `bases:`, as kustomize v2.0.3 needs. */
function copyWithBases(): string {
  const copy = mkdtempSync(join(tmpdir(), 'callbridge-kustomize-'));
  cpSync(join(ROOT, 'deploy/kubernetes'), copy, { recursive: true });
  for (const region of REGIONS) {
    const file = join(copy, 'overlays', region, 'kustomization.yaml');
    const text = readFileSync(file, 'utf8');
    const rewritten = text.replace(/^resources:\n {2}- \.\.\/\.\.\/base$/m, 'bases:\n  - ../../base');
    if (rewritten === text) throw new Error(`${file}: no resources entry for the base`);
    writeFileSync(file, rewritten);
  }
  return copy;
}

/**
 * kubectl before 1.21 (Debian bookworm's kubernetes-client is 1.20) embeds kustomize v2.0.3, which
 * reads a base only from `bases:`; later ones take it in `resources:` and warn about `bases:`.
 */
function kubectlMinor(): number {
  const version = spawnSync(KUBECTL!, ['version', '--client', '-o', 'json'], { encoding: 'utf8' });
  const minor = (JSON.parse(version.stdout || '{}') as { clientVersion?: { minor?: string } }).clientVersion
    ?.minor;
  return Number.parseInt(minor ?? '99', 10);
}

function render(root: string, region: string): KubeObject[] {
  const result = spawnSync(KUBECTL!, ['kustomize', join(root, 'overlays', region)], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (result.status !== 0) throw new Error(`kubectl kustomize ${region} failed:\n${result.stderr}`);
  return parseAllDocuments(result.stdout).map((doc) => doc.toJS() as KubeObject);
}

type Env = { name: string; value?: string; valueFrom?: Record<string, Record<string, string>> };
interface Container {
  name: string;
  image: string;
  env?: Env[];
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>;
  ports?: Array<{ name: string; containerPort: number }>;
  readinessProbe?: { httpGet?: { path: string; port: string } };
  livenessProbe?: { httpGet?: { path: string; port: string } };
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  volumeMounts?: Array<{ name: string; mountPath: string; subPath?: string }>;
}
interface PodTemplate {
  metadata: { labels: Record<string, string> };
  spec: {
    containers: Container[];
    terminationGracePeriodSeconds?: number;
    volumes?: Array<{ name: string; configMap?: { name: string } }>;
  };
}
type Workload = KubeObject & {
  spec: {
    serviceName?: string;
    podManagementPolicy?: string;
    selector: { matchLabels: Record<string, string> };
    template: PodTemplate;
  };
};
type Service = KubeObject & {
  spec: {
    clusterIP?: string;
    publishNotReadyAddresses?: boolean;
    selector: Record<string, string>;
    ports: Array<{ name: string; targetPort: string }>;
  };
};
type ConfigMap = KubeObject & { data: Record<string, string> };

const byKind = <T extends KubeObject>(objects: KubeObject[], kind: string, name?: string) => {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  if (found.length === 0) throw new Error(`no ${kind} ${name ?? ''}`);
  return found as T[];
};
const one = <T extends KubeObject>(objects: KubeObject[], kind: string, name?: string) => {
  const found = byKind<T>(objects, kind, name);
  if (found.length !== 1) throw new Error(`${found.length} ${kind} ${name ?? ''}`);
  return found[0]!;
};
/** The ConfigMap whose generated name starts with `name-`. */
const generated = (objects: KubeObject[], name: string) =>
  byKind<ConfigMap>(objects, 'ConfigMap').find(
    (o) => o.metadata.name.startsWith(`${name}-`) || o.metadata.name === name,
  )!;
const selects = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([key, value]) => labels[key] === value);

/** A copy of deploy/kubernetes with `change` applied to it, and that copy's overlay `region` rendered. */
function renderChanged(region: string, change: (root: string) => void): KubeObject[] {
  const copy = mkdtempSync(join(tmpdir(), 'callbridge-kustomize-'));
  try {
    cpSync(join(ROOT, 'deploy/kubernetes'), copy, { recursive: true });
    change(copy);
    return render(copy, region);
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

/** The overlay of `region` with the optional monitoring component added, as docs/deploy-kubernetes.md says. */
function renderWithMonitoring(region: string): KubeObject[] {
  return renderChanged(`${region}-monitoring`, (root) => {
    mkdirSync(join(root, 'overlays', `${region}-monitoring`));
    writeFileSync(
      join(root, 'overlays', `${region}-monitoring`, 'kustomization.yaml'),
      [
        'apiVersion: kustomize.config.k8s.io/v1beta1',
        'kind: Kustomization',
        'resources:',
        `  - ../${region}`,
        'components:',
        '  - ../../components/monitoring',
        '',
      ].join('\n'),
    );
  });
}

describe.skipIf(!KUBECTL)('deploy/kubernetes', () => {
  const rendered = new Map<string, KubeObject[]>();
  const monitored = new Map<string, KubeObject[]>();
  let fields: ReturnType<typeof fieldChecker>;

  beforeAll(() => {
    const shipped = join(ROOT, 'deploy/kubernetes');
    const root = kubectlMinor() >= 21 ? shipped : copyWithBases();
    try {
      for (const region of REGIONS) rendered.set(region, render(root, region));
    } finally {
      if (root !== shipped) rmSync(root, { recursive: true, force: true });
    }
    // Components need kustomize v3.7 or later (kubectl 1.21).
    if (kubectlMinor() >= 21)
      for (const region of REGIONS) monitored.set(region, renderWithMonitoring(region));
    fields = fieldChecker(ROOT, [...rendered.values(), ...monitored.values()].flat());
  }, 120_000);

  it('renders the same with the base under bases:, as kubectl 1.20 needs it', () => {
    const copy = copyWithBases();
    try {
      for (const region of REGIONS) expect(render(copy, region)).toEqual(rendered.get(region));
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it('catches a misspelt field, a wrong type and a missing required field', async () => {
    const statefulSet = structuredClone(one<Workload>(rendered.get('global')!, 'StatefulSet', 'callbridge'));
    const container = statefulSet.spec.template.spec.containers[0]! as Container & Record<string, unknown>;
    container.readinesProbe = container.readinessProbe;
    (statefulSet.spec.template.spec as Record<string, unknown>).terminationGracePeriod = 660;
    expect(fields.unknownFields(statefulSet)).toEqual([
      'StatefulSet/callbridge.spec.template.spec.containers[0].readinesProbe',
      'StatefulSet/callbridge.spec.template.spec.terminationGracePeriod',
    ]);
    container.ports = [{ name: 'http', containerPort: 'eighty' as unknown as number }];
    expect((await schemaProblems(statefulSet)).join()).toContain('containerPort must be integer');
    const monitor = structuredClone(one<KubeObject>(monitored.get('global')!, 'ServiceMonitor'));
    delete (monitor.spec as Record<string, unknown>).selector;
    expect((await schemaProblems(monitor)).join()).toContain('spec must have required property selector');
  });

  describe.each(REGIONS)('overlay %s', (region) => {
    const objects = () => rendered.get(region)!;
    const server = () => one<Workload>(objects(), 'StatefulSet', 'callbridge');
    const container = () => server().spec.template.spec.containers.find((c) => c.name === 'callbridge')!;
    const config = () => generated(objects(), 'callbridge-config').data;

    it('renders objects that validate against the Kubernetes API schemas, with no unknown field', async () => {
      expect(
        objects()
          .map((o) => o.kind)
          .sort(),
      ).toEqual(
        [
          'ConfigMap',
          'ConfigMap',
          'ConfigMap',
          'ConfigMap',
          'ConfigMap',
          'ConfigMap',
          'Deployment',
          'HorizontalPodAutoscaler',
          'Ingress',
          'NetworkPolicy',
          'NetworkPolicy',
          'PodDisruptionBudget',
          'PodDisruptionBudget',
          'Service',
          'Service',
          'Service',
          'StatefulSet',
        ].sort(),
      );
      // The Prometheus Operator's kinds come only with the optional component.
      expect(
        (monitored.get(region) ?? [])
          .map((o) => o.kind)
          .filter((kind) => !objects().some((o) => o.kind === kind))
          .sort(),
      ).toEqual(monitored.has(region) ? ['PrometheusRule', 'ServiceMonitor'] : []);
      const problems: string[] = [];
      for (const object of [...objects(), ...(monitored.get(region) ?? [])]) {
        for (const problem of await schemaProblems(object))
          problems.push(`${object.kind}/${object.metadata.name}: ${problem}`);
        problems.push(...fields.unknownFields(object));
      }
      expect(problems).toEqual([]);
    });

    it(`puts everything in namespace callbridge-${region}`, () => {
      expect(new Set(objects().map((o) => o.metadata.namespace))).toEqual(new Set([`callbridge-${region}`]));
    });

    it(`sets REGION=${region}, its public URL, and the Redis of its namespace under its own key prefix`, () => {
      expect(config().REGION).toBe(region);
      expect(config().PUBLIC_URL).toBe(
        region === 'global' ? 'https://voice.example.com' : `https://voice-${region}.example.com`,
      );
      expect(config().REDIS_KEY_PREFIX).toBe(`callbridge:${region}:`);
      const redis = container().env?.find((e) => e.name === 'REDIS_URL');
      expect(redis).toEqual({
        name: 'REDIS_URL',
        valueFrom: { secretKeyRef: { name: 'callbridge-redis', key: 'url' } },
      });
    });

    it('gives callbridge a configuration it starts with, dialing the region’s own hosts', () => {
      let loaded: ReturnType<typeof loadConfig>;
      // The env a pod gets: the ConfigMap, the pod name, and stand-ins for what the Secrets hold.
      const env = {
        ...config(),
        INSTANCE_ID: 'callbridge-0',
        REDIS_URL: 'redis://redis.example.com:6379',
        TWILIO_ACCOUNT_SID: `AC${'0'.repeat(32)}`,
        TWILIO_AUTH_TOKEN: 'twilio-auth-token-for-tests',
        AGENT_API_KEY: 'agent-key-for-tests',
        STREAM_TOKEN_SECRET: 'stream-token-secret-for-tests',
      };
      // CONFIG_DIR as the pod mounts it: the routing ConfigMap, with the agents ConfigMap as agents/.
      const configDir = mkdtempSync(join(tmpdir(), 'callbridge-pod-config-'));
      try {
        mkdirSync(join(configDir, 'agents'));
        for (const [file, text] of Object.entries(generated(objects(), 'callbridge-routing').data))
          writeFileSync(join(configDir, file), text);
        for (const [file, text] of Object.entries(generated(objects(), 'callbridge-agents').data))
          writeFileSync(join(configDir, 'agents', file), text);
        loaded = loadConfig({ ...env, CONFIG_DIR: configDir }, { cwd: ROOT });
      } finally {
        rmSync(configDir, { recursive: true, force: true });
      }
      const regions = JSON.parse(readFileSync(join(ROOT, 'config/regions.json'), 'utf8')) as Record<
        string,
        { agentUrl: string }
      >;
      expect(loaded!.region).toBe(region);
      expect(loaded!.agent.url).toBe(regions[region]!.agentUrl);
      expect(loaded!.redisKeyPrefix).toBe(`callbridge:${region}:`);
      expect(loaded!.trustProxy).not.toBe(false);
      expect(Object.keys(loaded!.profiles).sort()).toEqual(['default', 'recorded', 'reminders', 'sales']);
    });

    it('mounts the profiles, number routes and regions from ConfigMaps made from config/', () => {
      const agents = generated(objects(), 'callbridge-agents');
      const routing = generated(objects(), 'callbridge-routing');
      const shipped = readdirSync(join(ROOT, 'config/agents')).filter((f) => f.endsWith('.json'));
      expect(Object.keys(agents.data).sort()).toEqual(shipped.sort());
      for (const file of shipped)
        expect(agents.data[file]).toBe(readFileSync(join(ROOT, 'config/agents', file), 'utf8'));
      expect(Object.keys(routing.data).sort()).toEqual(['numbers.json', 'regions.json']);
      const volumes = server().spec.template.spec.volumes ?? [];
      expect(volumes).toContainEqual({ name: 'config', configMap: { name: routing.metadata.name } });
      expect(volumes).toContainEqual({ name: 'agents', configMap: { name: agents.metadata.name } });
      const mounts = container().volumeMounts ?? [];
      expect(mounts).toContainEqual({ name: 'config', mountPath: '/app/config', readOnly: true });
      expect(mounts).toContainEqual({ name: 'agents', mountPath: '/app/config/agents', readOnly: true });
    });

    it('rolls the pods when a prompt changes: the ConfigMap gets a new name the pods follow', () => {
      const changed = renderChanged(region, (root) => {
        const file = join(root, 'base/config/agents/default.json');
        writeFileSync(file, readFileSync(file, 'utf8').replace('Example Dental', 'Example Clinic'));
      });
      const before = generated(objects(), 'callbridge-agents').metadata.name;
      const after = generated(changed, 'callbridge-agents').metadata.name;
      expect(after).not.toBe(before);
      const template = one<Workload>(changed, 'StatefulSet', 'callbridge').spec.template.spec;
      expect(template.volumes).toContainEqual({ name: 'agents', configMap: { name: after } });
    });

    it('serves PUBLIC_URL through an Ingress with TLS that keeps media WebSockets open', () => {
      const ingress = one<
        KubeObject & {
          metadata: { annotations: Record<string, string> };
          spec: {
            tls: Array<{ hosts: string[]; secretName: string }>;
            rules: Array<{
              host: string;
              http: { paths: Array<{ path: string; backend: { service: { name: string } } }> };
            }>;
          };
        }
      >(objects(), 'Ingress');
      const host = new URL(config().PUBLIC_URL!).host;
      expect(new URL(config().PUBLIC_URL!).protocol).toBe('https:');
      expect(ingress.spec.tls).toEqual([{ hosts: [host], secretName: 'callbridge-tls' }]);
      expect(ingress.spec.rules.map((rule) => rule.host)).toEqual([host]);
      const backend = ingress.spec.rules[0]!.http.paths[0]!;
      expect(backend.path).toBe('/');
      one<Service>(objects(), 'Service', backend.backend.service.name);
      expect(backend.backend.service.name).toBe('callbridge-balancer');
      const annotations = ingress.metadata.annotations;
      expect(Number(annotations['nginx.ingress.kubernetes.io/proxy-read-timeout'])).toBeGreaterThanOrEqual(
        3600,
      );
      expect(Number(annotations['nginx.ingress.kubernetes.io/proxy-send-timeout'])).toBeGreaterThanOrEqual(
        3600,
      );
    });

    it('keeps secrets out of the files: every credential comes from a Secret the operator creates', () => {
      expect(objects().filter((o) => o.kind === 'Secret')).toEqual([]);
      const secretish = /SECRET|TOKEN|KEY$|PASSWORD|AUTH|REDIS_URL/;
      expect(
        Object.keys(config()).filter((name) => secretish.test(name) && name !== 'REDIS_KEY_PREFIX'),
      ).toEqual([]);
      for (const env of container().env ?? []) {
        if (secretish.test(env.name)) expect(env.valueFrom?.secretKeyRef, env.name).toBeDefined();
        else expect(env.valueFrom, env.name).toBeDefined();
      }
      expect(container().envFrom).toContainEqual({ secretRef: { name: 'callbridge-secrets' } });
    });

    // A pod's disk is no place for recordings: any pod must serve any call's, and a pod's emptyDir
    // goes with the pod. The spool (DATA_DIR) outlives the pod, so a pod that died mid-call uploads
    // the recording when it starts again under its name.
    it('keeps recordings in a bucket every pod shares, and DATA_DIR on a claim each pod keeps', () => {
      expect(config()).toMatchObject({ RECORDING_STORE: 's3', S3_BUCKET: 'callbridge-recordings' });
      expect(container().envFrom).toContainEqual({ secretRef: { name: 'callbridge-recordings' } });
      const data = container().volumeMounts?.find((m) => m.mountPath === '/app/data');
      expect(data?.name).toBe('data');
      expect((server().spec.template.spec.volumes ?? []).map((v) => v.name)).not.toContain('data');
      const claims = (server().spec as { volumeClaimTemplates?: Array<{ metadata: { name: string } }> })
        .volumeClaimTemplates;
      expect(claims?.map((claim) => claim.metadata.name)).toEqual(['data']);
    });

    it('names each instance after its pod, and makes every pod resolvable by name through a headless Service', () => {
      expect(container().env).toContainEqual({
        name: 'INSTANCE_ID',
        valueFrom: { fieldRef: { fieldPath: 'metadata.name' } },
      });
      expect(server().spec.podManagementPolicy).toBe('Parallel');
      const headless = one<Service>(objects(), 'Service', server().spec.serviceName);
      expect(headless.spec.clusterIP).toBe('None');
      expect(headless.spec.publishNotReadyAddresses).toBe(true);
      expect(selects(headless.spec.selector, server().spec.template.metadata.labels)).toBe(true);
      // The balancer looks pods up by exactly these names.
      const template = generated(objects(), 'callbridge-balancer').data['callbridge.conf.template']!;
      expect(template).toContain(`(?<pod>${server().metadata.name}-[0-9]{1,4})`);
      expect(template).toContain(`$pod.${headless.metadata.name}.\${POD_NAMESPACE}.svc.\${CLUSTER_DOMAIN}`);
    });

    it('probes /readyz and /healthz, waits out the balancer, and outlasts the drain before SIGKILL', () => {
      const http = container().ports?.find((p) => p.name === 'http');
      expect(http?.containerPort).toBe(Number(config().PORT));
      expect(container().readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http' });
      expect(container().livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
      const preStop = container().lifecycle?.preStop?.exec?.command ?? [];
      expect(preStop[0]).toBe('sleep');
      const preStopMs = Number(preStop[1]) * 1000;
      expect(preStopMs).toBeGreaterThanOrEqual(5_000);
      const graceMs = (server().spec.template.spec.terminationGracePeriodSeconds ?? 30) * 1000;
      expect(FAREWELL_WAIT_MS).toBeGreaterThan(0);
      expect(graceMs).toBeGreaterThan(preStopMs + Number(config().DRAIN_TIMEOUT_MS) + FAREWELL_WAIT_MS);
    });

    it('spreads webhooks over the ready pods through a Service the balancer reaches by name', () => {
      const service = one<Service>(objects(), 'Service', 'callbridge');
      expect(service.spec.clusterIP).toBeUndefined();
      expect(selects(service.spec.selector, server().spec.template.metadata.labels)).toBe(true);
      const balancer = one<Workload>(objects(), 'Deployment', 'callbridge-balancer');
      const nginx = balancer.spec.template.spec.containers[0]!;
      expect(nginx.env).toContainEqual({
        name: 'POD_NAMESPACE',
        valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } },
      });
      const configMap = balancer.spec.template.spec.volumes?.find((v) => v.configMap)?.configMap?.name;
      expect(configMap).toBe(generated(objects(), 'callbridge-balancer').metadata.name);
      expect(nginx.volumeMounts?.map((m) => m.mountPath)).toContain(
        '/etc/nginx/templates/callbridge.conf.template',
      );
      const template = generated(objects(), 'callbridge-balancer').data['callbridge.conf.template']!;
      expect(template).toContain(
        `default ${service.metadata.name}.\${POD_NAMESPACE}.svc.\${CLUSTER_DOMAIN};`,
      );
    });

    it('autoscales the StatefulSet on calls per pod, and lets one pod go at a time', () => {
      const hpa = one<KubeObject & { spec: Record<string, unknown> }>(objects(), 'HorizontalPodAutoscaler');
      expect(hpa.apiVersion).toBe('autoscaling/v2');
      expect(hpa.spec.scaleTargetRef).toEqual({
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        name: 'callbridge',
      });
      expect(hpa.spec.metrics).toEqual([
        {
          type: 'Pods',
          pods: {
            metric: { name: 'callbridge_calls_active' },
            target: { type: 'AverageValue', averageValue: '200' },
          },
        },
      ]);
      expect(Number(config().MAX_CALLS)).toBeGreaterThan(200);
      const pdb = one<
        KubeObject & { spec: { maxUnavailable: number; selector: { matchLabels: Record<string, string> } } }
      >(objects(), 'PodDisruptionBudget', 'callbridge');
      expect(pdb.spec.maxUnavailable).toBe(1);
      expect(selects(pdb.spec.selector.matchLabels, server().spec.template.metadata.labels)).toBe(true);
    });

    it('lets only the balancer, the other instances and Prometheus reach the pods', () => {
      const policy = one<
        KubeObject & {
          spec: {
            podSelector: { matchLabels: Record<string, string> };
            ingress: Array<{ from: Array<{ podSelector?: { matchLabels: Record<string, string> } }> }>;
          };
        }
      >(objects(), 'NetworkPolicy', 'callbridge');
      expect(selects(policy.spec.podSelector.matchLabels, server().spec.template.metadata.labels)).toBe(true);
      const balancerLabels = one<Workload>(objects(), 'Deployment', 'callbridge-balancer').spec.template
        .metadata.labels;
      const sources = policy.spec.ingress.flatMap((rule) => rule.from);
      expect(sources.some((s) => s.podSelector && selects(s.podSelector.matchLabels, balancerLabels))).toBe(
        true,
      );
      expect(sources.map((s) => s.podSelector?.matchLabels['app.kubernetes.io/name'])).toContain(
        'prometheus',
      );
    });

    it.skipIf(!KUBECTL || kubectlMinor() < 21)(
      'scrapes every pod as job "callbridge" with the pod name as instance, and ships the alerts and dashboards',
      () => {
        const monitor = one<
          KubeObject & {
            spec: {
              selector: { matchLabels: Record<string, string> };
              endpoints: Array<Record<string, unknown>>;
            };
          }
        >(monitored.get(region)!, 'ServiceMonitor');
        const headless = one<Service>(objects(), 'Service', 'callbridge-pods');
        expect(selects(monitor.spec.selector.matchLabels, headless.metadata.labels ?? {})).toBe(true);
        expect(
          selects(
            monitor.spec.selector.matchLabels,
            one<Service>(objects(), 'Service', 'callbridge').metadata.labels ?? {},
          ),
        ).toBe(false);
        const [endpoint] = monitor.spec.endpoints;
        expect(endpoint).toMatchObject({ port: 'http', path: '/metrics' });
        expect(endpoint!.relabelings).toEqual([
          { targetLabel: 'job', replacement: 'callbridge' },
          { sourceLabels: ['__meta_kubernetes_pod_name'], targetLabel: 'instance' },
        ]);

        const rule = one<KubeObject & { spec: { groups: unknown } }>(
          monitored.get(region)!,
          'PrometheusRule',
        );
        expect(rule.spec.groups).toEqual(
          parseYaml(readFileSync(join(ROOT, 'prometheus/alerts.yml'), 'utf8')).groups,
        );

        const dashboards = one<ConfigMap>(objects(), 'ConfigMap', 'callbridge-dashboards');
        expect(dashboards.metadata.labels?.grafana_dashboard).toBe('1');
        const provisioned = readdirSync(join(ROOT, 'grafana/dashboards')).filter((f) => f.endsWith('.json'));
        expect(Object.keys(dashboards.data).sort()).toEqual(provisioned.sort());
        for (const file of provisioned) {
          expect(dashboards.data[file]).toBe(readFileSync(join(ROOT, 'grafana/dashboards', file), 'utf8'));
        }
        const datasource = generated(objects(), 'callbridge-grafana-datasource');
        expect(datasource.metadata.labels?.grafana_datasource).toBe('1');
        expect(datasource.data['callbridge-prometheus.yaml']).toContain('uid: callbridge-prometheus');
      },
    );
  });
});

// Redis is a requirement the operator provides; the example that shows one is valid Kubernetes.
describe('deploy/kubernetes/examples/redis.yaml', () => {
  it('holds a Redis StatefulSet and its Service that validate against the API schemas', async () => {
    const objects = parseAllDocuments(
      readFileSync(join(ROOT, 'deploy/kubernetes/examples/redis.yaml'), 'utf8'),
    ).map((doc) => doc.toJS() as KubeObject);
    expect(objects.map((o) => o.kind)).toEqual(['StatefulSet', 'Service']);
    const problems: string[] = [];
    for (const object of objects) problems.push(...(await schemaProblems(object)));
    expect(problems).toEqual([]);
    const service = objects[1] as Service & { spec: { ports: Array<{ port: number }> } };
    expect(service.metadata.name).toBe('redis');
    expect(service.spec.ports[0]!.port).toBe(6379);
  });
});

// The bucket is a requirement the operator provides, like Redis; the example MinIO is valid
// Kubernetes and makes the very bucket the base names.
describe('deploy/kubernetes/examples/minio.yaml', () => {
  it('holds a MinIO StatefulSet, its Service and a Job making the base’s bucket, valid against the API schemas', async () => {
    const objects = parseAllDocuments(
      readFileSync(join(ROOT, 'deploy/kubernetes/examples/minio.yaml'), 'utf8'),
    ).map((doc) => doc.toJS() as KubeObject);
    expect(objects.map((o) => o.kind)).toEqual(['StatefulSet', 'Service', 'Job']);
    const problems: string[] = [];
    for (const object of objects) problems.push(...(await schemaProblems(object)));
    expect(problems).toEqual([]);
    const service = objects[1] as Service & { spec: { ports: Array<{ port: number }> } };
    expect(`http://${service.metadata.name}:${service.spec.ports[0]!.port}`).toBe('http://minio:9000');
    const base = readFileSync(join(ROOT, 'deploy/kubernetes/base/kustomization.yaml'), 'utf8');
    const bucket = /- S3_BUCKET=(\S+)/.exec(base)?.[1];
    const job = objects[2] as KubeObject & {
      spec: { template: { spec: { containers: Array<{ args: string[] }> } } };
    };
    expect(job.spec.template.spec.containers[0]!.args[0]).toContain(
      `mc mb --ignore-existing stack/${bucket}`,
    );
  });
});

// docs/deploy-kubernetes.md once gave two different ingress timeouts: every one it names is the
// manifest's.
describe('docs/deploy-kubernetes.md', () => {
  it('names the ingress timeouts the base Ingress sets, and no other', () => {
    const doc = readFileSync(join(ROOT, 'docs/deploy-kubernetes.md'), 'utf8');
    const ingress = readFileSync(join(ROOT, 'deploy/kubernetes/base/ingress.yaml'), 'utf8');
    const set = new Set([...ingress.matchAll(/proxy-(?:read|send)-timeout: '(\d+)'/g)].map((m) => m[1]));
    expect(set.size).toBe(1);
    const named = [...doc.matchAll(/timeout[`:\s]*"?(\d+)"?`/g)].map((m) => m[1]);
    expect(named.length).toBeGreaterThan(0);
    expect(new Set(named)).toEqual(set);
  });
});
