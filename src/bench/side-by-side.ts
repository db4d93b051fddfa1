// The load benchmark's summary for a reader: callbridge and the two relays of the same run side by
// side, one row per figure (every latency's p50, p99 and max included), with callbridge's ratio to
// each relay. The JSON stays the record; this is what a person reads at the end of a run.
import type { TargetResult } from './run.js';
import type { LatencySummary } from './samples.js';

type Row = [label: string, pick: (r: TargetResult) => number | null];

const latencyRows = (name: string, pick: (r: TargetResult) => LatencySummary): Row[] =>
  (['p50', 'p99', 'max'] as const).map((key): Row => [`${name} ${key} ms`, (r) => pick(r)[key]]);

const ROWS: Row[] = [
  ...latencyRows('uplink', (r) => r.uplinkLatencyMs),
  ...latencyRows('downlink', (r) => r.downlinkLatencyMs),
  ...latencyRows('barge-in', (r) => r.bargeInMs),
  ['CPU per call %', (r) => r.serverCpuPerCallPct],
  ['CPU / load CPU', (r) => r.server.cpuPerLoadCpu],
  ['server CPU % of a core', (r) => r.server.cpuPct],
  ['RSS per call KB', (r) => r.serverRssPerCallKB],
  ['loop delay p99 ms', (r) => r.server.loopDelayP99Ms],
  ['loop delay worst second ms', (r) => r.server.loopDelayMaxMs],
  ['failed calls', (r) => r.failedCalls],
  ['bytes lost+reordered+damaged', (r) => r.bytesLost + r.bytesReordered + r.bytesCorrupt],
  ['other processes CPU %', (r) => r.loadGenerators.otherProcessesCpuPct],
];

const cell = (value: number | null | undefined) =>
  value == null ? '-' : String(Math.round(value * 1000) / 1000);

const ratioCell = (ours: number | null, theirs: number | null | undefined) =>
  ours == null || theirs == null || theirs === 0 ? '-' : `${(ours / theirs).toFixed(2)}x`;

/** A plain-text table; a relay that was not run shows as dashes. */
export function sideBySide(targets: {
  callbridge: TargetResult;
  'bare relay': TargetResult | null;
  'sample relay': TargetResult | null;
}): string {
  const bare = targets['bare relay'];
  const sample = targets['sample relay'];
  const header = ['', 'callbridge', 'bare relay', 'sample relay', 'cb/bare', 'cb/sample'];
  const rows = ROWS.map(([label, pick]) => {
    const ours = pick(targets.callbridge);
    const b = bare ? pick(bare) : null;
    const s = sample ? pick(sample) : null;
    return [label, cell(ours), cell(b), cell(s), ratioCell(ours, b), ratioCell(ours, s)];
  });
  const table = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  const lines = table.map((row) =>
    row.map((text, i) => (i === 0 ? text.padEnd(widths[i]!) : text.padStart(widths[i]!))).join('  '),
  );
  return `\n${lines.join('\n')}\n`;
}
