// A campaign's progress for the terminal: a block redrawn in place on a TTY, one plain line per
// change otherwise (logs, pipes, CI).

/** The part of the admin API's campaign view the display reads. */
export interface CampaignSnapshot {
  id: string;
  name: string;
  state: string;
  startedAt: string | null;
  endedAt: string | null;
  pause: { by: string; reason: string } | null;
  progress: {
    contacts: Record<string, number> & { total: number };
    outcomes: Record<string, number>;
    inFlight: number;
    pace: { set: number; achieved: number };
    etaSeconds: number | null;
  };
}

const STATES = ['pending', 'dialing', 'retry', 'done'];

/** Seconds the campaign has run: from its start to its end, or to now. */
function ranSeconds(snapshot: CampaignSnapshot, nowMs: number): number {
  if (snapshot.startedAt === null) return 0;
  const end = snapshot.endedAt === null ? nowMs : Date.parse(snapshot.endedAt);
  return Math.max(0, Math.floor((end - Date.parse(snapshot.startedAt)) / 1_000));
}

function duration(seconds: number): string {
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

function outcomes(snapshot: CampaignSnapshot): string {
  const seen = Object.entries(snapshot.progress.outcomes).filter(([, n]) => n > 0);
  return seen.length === 0 ? 'none yet' : seen.map(([name, n]) => `${name} ${n}`).join(' · ');
}

function left(snapshot: CampaignSnapshot): string {
  const eta = snapshot.progress.etaSeconds;
  return eta === null ? '' : ` · about ${duration(eta)} left`;
}

/** The lines shown on a terminal, redrawn every poll. */
export function progressBlock(snapshot: CampaignSnapshot, nowMs: number): string[] {
  const { contacts, inFlight, pace } = snapshot.progress;
  const lines = [
    `campaign ${snapshot.id} "${snapshot.name}": ${snapshot.state} (${duration(ranSeconds(snapshot, nowMs))})`,
    `contacts  ${contacts.total} total · ${STATES.map((s) => `${contacts[s] ?? 0} ${s}`).join(' · ')}`,
    `outcomes  ${outcomes(snapshot)}`,
    `calls     ${inFlight} in flight · pace ${pace.achieved}/s (set ${pace.set}/s)${left(snapshot)}`,
  ];
  if (snapshot.pause) lines.push(`paused    by ${snapshot.pause.by}: ${snapshot.pause.reason}`);
  return lines;
}

/** The line printed when output is not a terminal. */
export function progressLine(snapshot: CampaignSnapshot, nowMs: number): string {
  const { contacts, inFlight, pace } = snapshot.progress;
  const paused = snapshot.pause ? ` (paused by ${snapshot.pause.by}: ${snapshot.pause.reason})` : '';
  return (
    `${duration(ranSeconds(snapshot, nowMs))} ${snapshot.state}${paused}: ${contacts.done ?? 0}/${contacts.total} done, ` +
    `${inFlight} in flight, pace ${pace.achieved}/s of ${pace.set}/s${left(snapshot)}; ${outcomes(snapshot)}`
  );
}

/** Moves the cursor back over `lines` lines and clears each, so the next block draws over it. */
export function eraseLines(lines: number): string {
  return lines === 0 ? '' : `\x1b[${lines}A${'\x1b[2K\n'.repeat(lines)}\x1b[${lines}A`;
}
