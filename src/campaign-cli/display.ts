// A campaign's progress for the terminal: a block redrawn in place on a TTY, one plain line per
// change otherwise (logs, pipes, CI).

import { type Campaign, CONTACT_STATES } from '../api/campaigns.js';

/** The part of the admin API's campaign view the display reads (src/api/campaigns.ts). */
export type CampaignSnapshot = Pick<
  Campaign,
  'id' | 'name' | 'state' | 'startedAt' | 'endedAt' | 'pause' | 'progress'
>;

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

/** Who paused the campaign and why, without saying "paused by" twice. */
export function pauseText(pause: { by: string; reason: string }): string {
  return /^paused\b/i.test(pause.reason) ? pause.reason : `paused by ${pause.by}: ${pause.reason}`;
}

/** Calls per second as a person reads them: two significant decimals at most. */
function rate(perSecond: number): string {
  return String(Math.round(perSecond * 100) / 100);
}

/** The lines shown on a terminal, redrawn every poll. */
export function progressBlock(snapshot: CampaignSnapshot, nowMs: number): string[] {
  const { contacts, inFlight, pace } = snapshot.progress;
  const lines = [
    `campaign ${snapshot.id} "${snapshot.name}": ${snapshot.state} (${duration(ranSeconds(snapshot, nowMs))})`,
    `contacts  ${contacts.total} total · ${CONTACT_STATES.map((s) => `${contacts[s] ?? 0} ${s}`).join(' · ')}`,
    `outcomes  ${outcomes(snapshot)}`,
    `calls     ${inFlight} in flight · pace ${rate(pace.achieved)}/s (set ${rate(pace.set)}/s)${left(snapshot)}`,
  ];
  if (snapshot.pause) {
    lines.push(`paused    ${pauseText(snapshot.pause)}`);
    lines.push(`          resume it with: callbridge campaign resume ${snapshot.id}`);
  }
  return lines;
}

/** The line printed when output is not a terminal. */
export function progressLine(snapshot: CampaignSnapshot, nowMs: number): string {
  const { contacts, inFlight, pace } = snapshot.progress;
  const paused = snapshot.pause ? ` (${pauseText(snapshot.pause)})` : '';
  return (
    `${duration(ranSeconds(snapshot, nowMs))} ${snapshot.state}${paused}: ${contacts.done ?? 0}/${contacts.total} done, ` +
    `${inFlight} in flight, pace ${rate(pace.achieved)}/s of ${rate(pace.set)}/s${left(snapshot)}; ${outcomes(snapshot)}`
  );
}

/**
 * Lines cut to the terminal's width: a line that wrapped would take two rows, and the next redraw,
 * which moves up one row per line, would leave its top on screen.
 */
export function fitWidth(lines: string[], columns: number | undefined): string[] {
  if (columns === undefined || columns < 10) return lines;
  return lines.map((line) => (line.length < columns ? line : `${line.slice(0, columns - 2)}…`));
}

/** Moves the cursor back over `lines` lines and clears each, so the next block draws over it. */
export function eraseLines(lines: number): string {
  return lines === 0 ? '' : `\x1b[${lines}A${'\x1b[2K\n'.repeat(lines)}\x1b[${lines}A`;
}

/** A campaign as `campaign list` shows it. */
export type CampaignListEntry = Pick<Campaign, 'id' | 'name' | 'state'> &
  Partial<Pick<Campaign, 'createdAt' | 'progress'>>;

/** `campaign list`: one row per campaign, newest first, in columns. */
export function campaignTable(campaigns: readonly CampaignListEntry[]): string[] {
  if (campaigns.length === 0) return ['no campaigns yet: start one with callbridge campaign run FILE.csv'];
  const rows = campaigns.map((c) => [
    c.id,
    c.state,
    c.progress ? `${c.progress.contacts.done ?? 0}/${c.progress.contacts.total}` : '',
    c.createdAt?.slice(0, 16).replace('T', ' ') ?? '',
    c.name,
  ]);
  const header = ['id', 'state', 'done', 'created (UTC)', 'name'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const format = (row: string[]) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [format(header), ...rows.map(format)];
}
