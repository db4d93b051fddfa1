// The Grafana dashboards as files: every panel has a unit, reads the provisioned datasource by its
// fixed uid, filters on the region and instance variables, and rates over $__rate_interval; the
// provisioning, the Prometheus config and docker-compose.yml agree on paths, names and intervals.
// test/observability/prometheus.test.ts runs the same expressions against a real Prometheus.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
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
  const compose = text('docker-compose.yml');
  const datasource = text('grafana/provisioning/datasources/prometheus.yml');
  const provider = text('grafana/provisioning/dashboards/callbridge.yml');
  const prometheus = text('prometheus/prometheus.yml');

  it('provisions the datasource under the uid the dashboards name, at the compose Prometheus', () => {
    expect(datasource).toMatch(new RegExp(`^\\s+uid: ${DATASOURCE_UID}$`, 'm'));
    expect(datasource).toMatch(/^\s+type: prometheus$/m);
    expect(datasource).toMatch(/^\s+url: http:\/\/prometheus:9090$/m);
    expect(compose).toMatch(/^ {2}prometheus:$/m);
    // $__rate_interval derives from the scrape interval Grafana is told.
    const scrape = /^\s+scrape_interval: (\S+)$/m.exec(prometheus)?.[1];
    expect(datasource).toMatch(new RegExp(`^\\s+timeInterval: ${scrape}$`, 'm'));
  });

  it('loads the dashboards from the folder docker-compose.yml mounts', () => {
    expect(provider).toMatch(/^\s+type: file$/m);
    const path = /^\s+path: (\S+)$/m.exec(provider)?.[1];
    expect(path).toBeDefined();
    expect(compose).toContain(`- ./grafana/dashboards:${path}:ro`);
    expect(compose).toContain('- ./grafana/provisioning:/etc/grafana/provisioning:ro');
  });

  it('scrapes the compose callbridge as job "callbridge" and loads the alerts next to the config', () => {
    expect(prometheus).toMatch(/^\s+- job_name: callbridge$/m);
    expect(prometheus).toContain("- targets: ['callbridge:8080']");
    expect(prometheus).toMatch(/^rule_files:\n\s+- alerts\.yml$/m);
    expect(compose).toMatch(/^ {2}callbridge:\n\s+build: \.$/m);
    expect(compose).toMatch(/^\s+PORT: ['"]8080['"]$/m);
    expect(compose).toContain('- ./prometheus:/etc/prometheus:ro');
    expect(compose).toContain('- --config.file=/etc/prometheus/prometheus.yml');
    expect(text('prometheus/alerts.yml')).toContain('up{job="callbridge"}');
  });

  it('starts callbridge with the built-in local agent when nothing is set', () => {
    // The environment docker-compose.yml gives callbridge with an empty shell and no .env file.
    const block = /^ {2}callbridge:\n([\s\S]*?)^ {2}\w/m.exec(compose)?.[1] ?? '';
    const environment = /^ {4}environment:\n((?: {6}.*\n)+)/m.exec(block)?.[1] ?? '';
    const env: Record<string, string> = {};
    for (const line of environment.split('\n').filter((l) => l.trim() !== '' && !l.trim().startsWith('#'))) {
      const [, name, raw] = /^ {6}(\w+): (.*)$/.exec(line) ?? [];
      expect(name, line).toBeDefined();
      const value = raw!.replace(/^['"]|['"]$/g, '');
      env[name!] = value.replace(/\$\{\w+:-([^}]*)\}/g, '$1');
    }
    expect(Object.keys(env)).toContain('REDIS_URL');
    const dataDir = mkdtempSync(join(tmpdir(), 'callbridge-compose-'));
    try {
      // The image sets DATA_DIR; the config folder is the one the image copies.
      const config = loadConfig({ ...env, DATA_DIR: dataDir }, { cwd: ROOT });
      expect(config.agent.url).toBeNull();
      expect(config.redisUrl).toBe('redis://redis:6379');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('runs callbridge, Redis, Prometheus and Grafana', () => {
    for (const service of ['callbridge', 'redis', 'prometheus', 'grafana']) {
      expect(compose).toMatch(new RegExp(`^ {2}${service}:$`, 'm'));
    }
    expect(compose).toMatch(/^\s+REDIS_URL: redis:\/\/redis:6379$/m);
  });
});
