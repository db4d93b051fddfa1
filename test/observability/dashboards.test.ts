// The Grafana dashboards as files: every panel has a unit, reads the provisioned datasource by its
// fixed uid, filters on the region and instance variables, and rates over $__rate_interval; the
// provisioning, the Prometheus config and docker-compose.yml agree on paths, names and intervals.
// test/observability/prometheus.test.ts runs the same expressions against a real Prometheus.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { loadConfig } from '../../src/carriers/load-config.js';
import {
  DASHBOARD_FILES,
  DATASOURCE_UID,
  dataPanels,
  panelTargets,
  ROOT,
  readDashboard,
  variableQuery,
} from './grafana.js';

/** Every `callbridge_…` name an expression selects, with its `{…}` matchers ('' when none). */
function selectors(expr: string): Array<{ name: string; matchers: string }> {
  return [...expr.matchAll(/\b(callbridge_[a-z0-9_]+)(\{[^}]*\})?/g)].map((m) => ({
    name: m[1]!,
    matchers: m[2] ?? '',
  }));
}

const text = (file: string) => readFileSync(join(ROOT, file), 'utf8');

describe.each(DASHBOARD_FILES)('%s', (file) => {
  const dashboard = readDashboard(file);
  const panels = dataPanels(dashboard);
  const targets = panelTargets(dashboard);

  it('has a stable uid, panels with unique ids, and targets with expressions', () => {
    expect(dashboard.uid).toMatch(/^callbridge-[a-z-]+$/);
    const ids = dashboard.panels.flatMap((p) => [p.id, ...(p.panels ?? []).map((n) => n.id)]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(panels.length).toBeGreaterThan(5);
    for (const panel of panels) {
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      expect(panel.gridPos, panel.title).toBeDefined();
      for (const target of panel.targets ?? []) expect(target.expr.trim(), panel.title).not.toBe('');
    }
  });

  it('gives every panel a unit', () => {
    const missing = panels.filter((panel) => !panel.fieldConfig?.defaults?.unit).map((p) => p.title);
    expect(missing).toEqual([]);
  });

  it('reads every panel, target and variable from the provisioned datasource by its fixed uid', () => {
    const wrong: string[] = [];
    for (const panel of panels) {
      if (panel.datasource?.uid !== DATASOURCE_UID) wrong.push(`panel ${panel.title}`);
      for (const target of panel.targets ?? []) {
        if (target.datasource?.uid !== DATASOURCE_UID) wrong.push(`${panel.title} ${target.refId}`);
      }
    }
    for (const variable of dashboard.templating.list) {
      if (variable.datasource?.uid !== DATASOURCE_UID) wrong.push(`variable ${variable.name}`);
    }
    expect(wrong).toEqual([]);
  });

  it('defines the region and instance variables from label_values queries', () => {
    const byName = new Map(dashboard.templating.list.map((v) => [v.name, v]));
    expect([...byName.keys()].sort()).toEqual(['instance', 'region']);
    expect(variableQuery(byName.get('region')!)).toMatch(/^label_values\(callbridge_[a-z_]+, region\)$/);
    expect(variableQuery(byName.get('instance')!)).toMatch(
      /^label_values\(callbridge_[a-z_]+\{region=~"\$region"\}, instance\)$/,
    );
  });

  it('filters every selector on $region and $instance, and uses no other variable', () => {
    const wrong: string[] = [];
    for (const { panel, target } of targets) {
      for (const { name, matchers } of selectors(target.expr)) {
        if (!matchers.includes('region=~"$region"') || !matchers.includes('instance=~"$instance"'))
          wrong.push(`${panel.title}: ${name}${matchers}`);
      }
      const variables = target.expr.match(/\$\w+/g) ?? [];
      for (const variable of variables) {
        if (!['$region', '$instance', '$__rate_interval'].includes(variable))
          wrong.push(`${panel.title}: ${variable}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('rates and increases over $__rate_interval only', () => {
    const wrong: string[] = [];
    for (const { panel, target } of targets) {
      const ranges = [...target.expr.matchAll(/\[([^\]]*)\]/g)].map((m) => m[1]);
      const windowed = [...target.expr.matchAll(/\b(rate|irate|increase|\w+_over_time)\(([^()]*)\)/g)];
      if (ranges.some((range) => range !== '$__rate_interval')) wrong.push(`${panel.title}: ${target.expr}`);
      if (windowed.length !== ranges.length) wrong.push(`${panel.title}: ${target.expr}`);
      for (const call of windowed) {
        if (!call[2]!.endsWith('[$__rate_interval]')) wrong.push(`${panel.title}: ${call[0]}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});

describe('provisioning and the compose stack', () => {
  const composeText = text('docker-compose.yml');
  const compose = parseYaml(composeText, { merge: true }) as Compose;
  const datasource = text('grafana/provisioning/datasources/prometheus.yml');
  const provider = text('grafana/provisioning/dashboards/callbridge.yml');
  const prometheus = text('prometheus/prometheus.yml');
  const scrape = (parseYaml(prometheus) as PrometheusConfig).scrape_configs[0]!;
  const instances = Object.keys(compose.services).filter((name) => /^callbridge-\d+$/.test(name));

  /** The environment docker-compose.yml gives a service with an empty shell and no .env file. */
  const environmentOf = (service: string) =>
    Object.fromEntries(
      Object.entries(compose.services[service]?.environment ?? {}).map(([name, value]) => [
        name,
        String(value).replace(/\$\{\w+:-([^}]*)\}/g, '$1'),
      ]),
    );

  it('provisions the datasource under the uid the dashboards name, at the compose Prometheus', () => {
    expect(datasource).toMatch(new RegExp(`^\\s+uid: ${DATASOURCE_UID}$`, 'm'));
    expect(datasource).toMatch(/^\s+type: prometheus$/m);
    expect(datasource).toMatch(/^\s+url: http:\/\/prometheus:9090$/m);
    expect(compose.services.prometheus).toBeDefined();
    // $__rate_interval derives from the scrape interval Grafana is told.
    const interval = /^\s+scrape_interval: (\S+)$/m.exec(prometheus)?.[1];
    expect(datasource).toMatch(new RegExp(`^\\s+timeInterval: ${interval}$`, 'm'));
  });

  it('loads the dashboards from the folder docker-compose.yml mounts', () => {
    expect(provider).toMatch(/^\s+type: file$/m);
    const path = /^\s+path: (\S+)$/m.exec(provider)?.[1];
    expect(path).toBeDefined();
    expect(compose.services.grafana?.volumes).toContain(`./grafana/dashboards:${path}:ro`);
    expect(compose.services.grafana?.volumes).toContain(
      './grafana/provisioning:/etc/grafana/provisioning:ro',
    );
  });

  it('scrapes every compose instance as job "callbridge", on its own, and loads the alerts next to the config', () => {
    expect(scrape.job_name).toBe('callbridge');
    const targets = scrape.static_configs.flatMap((c) => c.targets);
    expect(targets).toEqual(instances.map((name) => `${name}:${environmentOf(name).PORT}`));
    expect(targets.some((target) => target.startsWith('balancer'))).toBe(false);
    expect(prometheus).toMatch(/^rule_files:\n\s+- alerts\.yml$/m);
    for (const name of instances) {
      expect(compose.services[name]?.build).toBe('.');
      expect(environmentOf(name).PORT).toBe('8080');
    }
    expect(compose.services.prometheus?.volumes).toContain('./prometheus:/etc/prometheus:ro');
    expect(compose.services.prometheus?.command).toContain('--config.file=/etc/prometheus/prometheus.yml');
    expect(text('prometheus/alerts.yml')).toContain('up{job="callbridge"}');
  });

  it('labels each scraped instance by its INSTANCE_ID', () => {
    // Prometheus' own relabelling: the address without its port.
    const [relabel] = scrape.relabel_configs ?? [];
    expect(relabel).toMatchObject({ source_labels: ['__address__'], target_label: 'instance' });
    for (const name of instances) {
      const address = `${name}:8080`;
      expect(new RegExp(`^(?:${relabel!.regex})$`).exec(address)?.[1]).toBe(environmentOf(name).INSTANCE_ID);
    }
  });

  it('starts every instance with the built-in local agent and the shared Redis when nothing is set', () => {
    expect(instances.length).toBeGreaterThanOrEqual(3);
    const dataDir = mkdtempSync(join(tmpdir(), 'callbridge-compose-'));
    try {
      for (const name of instances) {
        const env = environmentOf(name);
        // The image sets DATA_DIR; the config folder is the one the image copies.
        const config = loadConfig({ ...env, DATA_DIR: dataDir }, { cwd: ROOT });
        expect(config.agent.url).toBeNull();
        expect(config.redisUrl).toBe('redis://redis:6379');
        expect(env.INSTANCE_ID).toBe(name);
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('runs the instances, the balancer, Redis, Prometheus, Grafana and the recordings bucket', () => {
    expect(Object.keys(compose.services).sort()).toEqual(
      [...instances, 'balancer', 'redis', 'prometheus', 'grafana', 'minio', 'minio-bucket'].sort(),
    );
    expect(composeText).toMatch(/^\s+REDIS_URL: redis:\/\/redis:6379$/m);
  });
});

interface ComposeService {
  build?: string;
  image?: string;
  environment?: Record<string, string | number>;
  volumes?: string[];
  command?: string[];
  ports?: string[];
  stop_grace_period?: string;
  networks?: Record<string, { ipv4_address?: string } | null> | string[];
}
interface Compose {
  services: Record<string, ComposeService>;
  networks?: Record<string, { ipam?: { config?: Array<{ subnet?: string }> } }>;
}
interface PrometheusConfig {
  scrape_configs: Array<{
    job_name: string;
    static_configs: Array<{ targets: string[] }>;
    relabel_configs?: Array<{ source_labels?: string[]; regex?: string; target_label?: string }>;
  }>;
}
