// CPU time and resident memory of a process, and the machine's CPU, read from Linux /proc (the
// bench's processes are not all Node children with an IPC channel: the server is `node dist/main.js`
// as deployed). Elsewhere the readers return null and the bench reports the figures as null.
import { readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';

/** USER_HZ: the unit of /proc CPU times; 100 on every mainstream Linux build. */
const TICKS_PER_SECOND = 100;

function read(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

export interface ProcessCpu {
  userMs: number;
  /** Kernel time: on loopback the TCP work of each send and receive lands here. */
  systemMs: number;
}

/** CPU time the process has used, in ms (10 ms resolution). */
export function processCpu(pid: number): ProcessCpu | null {
  const stat = read(`/proc/${pid}/stat`);
  if (stat === null) return null;
  // The command name may hold spaces and parentheses: fields are counted after its last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of proc(5), utime and stime, are 12 and 13 after the name and state.
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return null;
  return {
    userMs: (utime * 1000) / TICKS_PER_SECOND,
    systemMs: (stime * 1000) / TICKS_PER_SECOND,
  };
}

/** Resident set size in KiB. */
export function processRssKB(pid: number): number | null {
  const status = read(`/proc/${pid}/status`);
  const match = status === null ? null : /^VmRSS:\s+(\d+) kB$/m.exec(status);
  return match ? Number(match[1]) : null;
}

export interface MachineCpu {
  busy: number;
  total: number;
}

/** Cumulative busy and total jiffies of all cores. */
export function machineCpu(): MachineCpu | null {
  const line = read('/proc/stat')?.split('\n', 1)[0];
  if (!line?.startsWith('cpu ')) return null;
  const values = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already inside user).
  const total = values.slice(0, 8).reduce((sum, v) => sum + v, 0);
  const idle = (values[3] ?? 0) + (values[4] ?? 0);
  return { busy: total - idle, total };
}

/** CPU time (user and kernel) a process used between two readings, in ms; null when either is missing. */
export function cpuSpentMs(before: ProcessCpu | null, after: ProcessCpu | null): number | null {
  return before && after ? after.userMs + after.systemMs - before.userMs - before.systemMs : null;
}

/** The machine a result was measured on, as the bench sub-commands report it. */
export function machineSummary(): { cores: number; memoryMB: number; node: string } {
  return { cores: cpus().length, memoryMB: Math.round(totalmem() / 2 ** 20), node: process.version };
}
