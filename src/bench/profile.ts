// Reads a V8 CPU profile (`node --cpu-prof`) and ranks functions by self time: where the server's
// own CPU goes under the bench's load.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface SelfTime {
  function: string;
  /** `file:line`, relative to the package for its own files and dependencies. */
  location: string;
  selfMs: number;
  /** Share of the busy (non-idle) samples. */
  selfPct: number;
}

export interface ProfileSummary {
  file: string;
  busyMs: number;
  idleMs: number;
  top: SelfTime[];
  /** Self time by source file, the same ranking one level up. */
  topFiles: Array<{ file: string; selfMs: number; selfPct: number }>;
}

/** The newest `.cpuprofile` in `dir`, or null. */
export function newestProfile(dir: string): string | null {
  let newest: { path: string; mtimeMs: number } | null = null;
  for (const name of readdirSync(dir)) {
    if (!name.endsWith('.cpuprofile')) continue;
    const path = join(dir, name);
    const { mtimeMs } = statSync(path);
    if (!newest || mtimeMs > newest.mtimeMs) newest = { path, mtimeMs };
  }
  return newest?.path ?? null;
}

function shortUrl(url: string, root: string): string {
  if (url === '') return '';
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  return path.startsWith(root) ? relative(root, path) : path;
}

const round = (n: number) => Math.round(n * 10) / 10;

export function summarizeProfile(file: string, root: string, limit = 25): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const functions = new Map<string, SelfTime>();
  const files = new Map<string, number>();
  let idleUs = 0;
  let busyUs = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    if (frame.functionName === '(idle)') {
      idleUs += us;
      continue;
    }
    busyUs += us;
    const file = shortUrl(frame.url, root);
    const location = file === '' ? '' : `${file}:${frame.lineNumber + 1}`;
    const name = frame.functionName || '(anonymous)';
    const key = `${name} ${location}`;
    const entry = functions.get(key) ?? {
      function: name,
      location,
      selfMs: 0,
      selfPct: 0,
    };
    entry.selfMs += us / 1000;
    functions.set(key, entry);
    const fileKey = file === '' ? name : file;
    files.set(fileKey, (files.get(fileKey) ?? 0) + us / 1000);
  }
  const busyMs = busyUs / 1000;
  const pct = (ms: number) => (busyMs > 0 ? round((ms / busyMs) * 100) : 0);
  const top = [...functions.values()]
    .sort((a, b) => b.selfMs - a.selfMs)
    .slice(0, limit)
    .map((entry) => ({
      ...entry,
      selfMs: round(entry.selfMs),
      selfPct: pct(entry.selfMs),
    }));
  const topFiles = [...files.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([name, ms]) => ({ file: name, selfMs: round(ms), selfPct: pct(ms) }));
  return {
    file,
    busyMs: round(busyMs),
    idleMs: round(idleUs / 1000),
    top,
    topFiles,
  };
}
