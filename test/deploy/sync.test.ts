// The files under deploy/ that copy or render others (scripts/sync-deploy.mjs) are in step with
// their sources: kustomize cannot read grafana/ or prometheus/, so a change there must reach the
// copies in deploy/kubernetes/base before it ships.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { driftedFiles, generatedFiles, ROOT } from '../../scripts/sync-deploy.mjs';

describe('scripts/sync-deploy.mjs', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('finds every copy and rendering under deploy/ in step with its source', () => {
    expect(driftedFiles()).toEqual([]);
    const check = spawnSync(process.execPath, [join(ROOT, 'scripts/sync-deploy.mjs'), '--check'], {
      encoding: 'utf8',
    });
    expect(check.status, check.stderr).toBe(0);
  });

  it('names the copy a changed dashboard or alert leaves behind, until the script runs', () => {
    const dir = mkdtempSync(join(tmpdir(), 'callbridge-sync-'));
    dirs.push(dir);
    for (const path of ['grafana', 'prometheus', 'deploy', 'config'])
      cpSync(join(ROOT, path), join(dir, path), { recursive: true });
    expect(driftedFiles(dir)).toEqual([]);

    const dashboard = join(dir, 'grafana/dashboards/webhooks.json');
    writeFileSync(
      dashboard,
      readFileSync(dashboard, 'utf8').replace('"callbridge / Webhooks"', '"Webhooks"'),
    );
    const alerts = join(dir, 'prometheus/alerts.yml');
    writeFileSync(alerts, readFileSync(alerts, 'utf8').replace('for: 2m', 'for: 3m'));
    const profile = join(dir, 'config/agents/default.json');
    writeFileSync(profile, readFileSync(profile, 'utf8').replace('Example Dental', 'Example Clinic'));
    expect(driftedFiles(dir)).toEqual([
      'deploy/kubernetes/base/dashboards-configmap.yaml',
      'deploy/kubernetes/components/monitoring/prometheus-rule.yaml',
      'deploy/kubernetes/base/config/agents/default.json',
    ]);

    for (const { path, content } of generatedFiles(dir)) writeFileSync(join(dir, path), content);
    expect(driftedFiles(dir)).toEqual([]);
  });

  it('has the kustomizations use every file generated for them', () => {
    const read = (path: string) =>
      parse(readFileSync(join(ROOT, path), 'utf8')) as {
        resources: string[];
        configMapGenerator: Array<{ name: string; files?: string[] }>;
      };
    const base = read('deploy/kubernetes/base/kustomization.yaml');
    const monitoring = read('deploy/kubernetes/components/monitoring/kustomization.yaml');
    const generatorFiles = base.configMapGenerator.flatMap((generator) => generator.files ?? []);
    const paths = generatedFiles().map(({ path }) => path);
    for (const path of paths) {
      if (path.startsWith('deploy/kubernetes/base/config/'))
        expect(generatorFiles).toContain(path.slice('deploy/kubernetes/base/'.length));
      else if (path.startsWith('deploy/kubernetes/base/'))
        expect(base.resources).toContain(path.slice('deploy/kubernetes/base/'.length));
      else if (path.startsWith('deploy/kubernetes/components/monitoring/'))
        expect(monitoring.resources).toContain(path.slice('deploy/kubernetes/components/monitoring/'.length));
    }
    // A profile added to config/agents is copied and must be listed for its ConfigMap.
    expect(paths.filter((path) => path.startsWith('deploy/kubernetes/base/config/agents/'))).toHaveLength(4);
  });
});
