// The provisioned Grafana dashboards as data, for the tests that check them as files and against a
// real Prometheus.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '../..');
export const DATASOURCE_UID = 'callbridge-prometheus';
export const DASHBOARD_FILES = [
  'grafana/dashboards/calls.json',
  'grafana/dashboards/webhooks.json',
  'grafana/dashboards/campaigns.json',
];

export interface Target {
  refId: string;
  expr: string;
  datasource?: { type?: string; uid?: string };
}

export interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type?: string; uid?: string };
  fieldConfig?: { defaults?: { unit?: string } };
  gridPos?: { h: number; w: number; x: number; y: number };
  targets?: Target[];
  panels?: Panel[];
}

export interface Variable {
  name: string;
  type: string;
  datasource?: { type?: string; uid?: string };
  definition?: string;
  query?: { query?: string } | string;
}

export interface Dashboard {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: Variable[] };
}

export function readDashboard(file: string): Dashboard {
  return JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as Dashboard;
}

/** Panels that show data: rows are only headings (their nested panels, if collapsed, count too). */
export function dataPanels(dashboard: Dashboard): Panel[] {
  return dashboard.panels.flatMap((panel) => (panel.type === 'row' ? (panel.panels ?? []) : [panel]));
}

export function variableQuery(variable: Variable): string {
  return typeof variable.query === 'string' ? variable.query : (variable.query?.query ?? '');
}

/** Every expression of every data panel, with the panel it belongs to. */
export function panelTargets(dashboard: Dashboard): Array<{ panel: Panel; target: Target }> {
  return dataPanels(dashboard).flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel, target })));
}
