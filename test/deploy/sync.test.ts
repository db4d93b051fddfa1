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
    for (const path of ['grafana', 'prometheus', 'deploy'])
      cpSync(join(ROOT, path), join(dir, path), { recursive: true });
    expect(driftedFiles(dir)).toEqual([]);

    const dashboard = join(dir, 'grafana/dashboards/webhooks.json');
    writeFileSync(
      dashboard,
      readFileSync(dashboard, 'utf8').replace('"callbridge / Webhooks"', '"Webhooks"'),
    );
    const alerts = join(dir, 'prometheus/alerts.yml');
    writeFileSync(alerts, readFileSync(alerts, 'utf8').replace('for: 2m', 'for: 3m'));
    expect(driftedFiles(dir)).toEqual([
      'deploy/kubernetes/base/dashboards-configmap.yaml',
      'deploy/kubernetes/base/prometheus-rule.yaml',
    ]);

    for (const { path, content } of generatedFiles(dir)) writeFileSync(join(dir, path), content);
    expect(driftedFiles(dir)).toEqual([]);
  });

  it('has the base kustomization include every file it generates there', () => {
    const kustomization = parse(
      readFileSync(join(ROOT, 'deploy/kubernetes/base/kustomization.yaml'), 'utf8'),
    ) as {
      resources: string[];
    };
    const base = generatedFiles()
      .map(({ path }) => path)
      .filter((path) => path.startsWith('deploy/kubernetes/base/'))
      .map((path) => path.slice('deploy/kubernetes/base/'.length));
    expect(base.length).toBe(2);
    for (const file of base) expect(kustomization.resources).toContain(file);
  });
});
