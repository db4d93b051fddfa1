// `callbridge call --record`: once the call ended, where its recording is (docs/recordings.md). The
// server completes a recording after the call (the last writes, an upload), so this polls the admin
// API's `GET /v1/calls/:callSid` until the record carries it, bounded. Whether a call is recorded is
// the server's choice (the profile's `recording`); an unrecorded call gets the line that says how to
// turn it on.
import { join, resolve } from 'node:path';
import type { CallRecordingRecord } from '../../store/call-record.js';

export interface RecordingWaitOptions {
  server: string;
  callSid: string;
  token: { value: string } | { value: null; why: string };
  /** The token as a shell finds it, for the printed curl line: `$ADMIN_TOKEN` or the file read. */
  tokenInShell: string;
  /** Where a server on this machine keeps its data (DATA_DIR), for the file's path. */
  dataDir: string;
  timeoutMs: number;
  intervalMs: number;
}

/** Lines to print after the call. */
export async function recordingReport(opts: RecordingWaitOptions): Promise<string[]> {
  const base = opts.server.replace(/\/+$/, '');
  if (opts.token.value === null) return [`recording: not shown (${opts.token.why})`];
  const url = `${base}/v1/calls/${encodeURIComponent(opts.callSid)}`;
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    let answer: { status: number; body: unknown };
    try {
      answer = await getJson(url, opts.token.value);
    } catch (err) {
      return [`recording: not shown (cannot reach ${base}: ${(err as Error).message})`];
    }
    if (answer.status === 401 || answer.status === 403) {
      return ["recording: not shown (the admin API refused the token: is it this server's ADMIN_TOKEN?)"];
    }
    const recording = (answer.body as { recording?: CallRecordingRecord; profile?: string } | null)
      ?.recording;
    if (answer.status === 200 && recording) return describe(recording, opts, `${url}/recording`);
    if (answer.status === 200 && Date.now() + opts.intervalMs > deadline) {
      const profile = (answer.body as { profile?: string }).profile ?? '<profile>';
      return [
        `recording: none (the call was not recorded: add "recording": {"enabled": true} to config/agents/${profile}.json)`,
      ];
    }
    if (Date.now() + opts.intervalMs > deadline) {
      return [
        `recording: not ready after ${Math.round(opts.timeoutMs / 1000)} s (GET ${url} shows it later)`,
      ];
    }
    await new Promise((done) => setTimeout(done, opts.intervalMs));
  }
}

function describe(recording: CallRecordingRecord, opts: RecordingWaitOptions, url: string): string[] {
  const seconds = (recording.durationMs / 1000).toFixed(1);
  const lines = [`recording: ${recording.state}, ${seconds} s, ${recording.bytes} bytes`];
  if (recording.state === 'deleted') return lines;
  lines.push(`  url:  ${url}`);
  lines.push(
    `  file: ${join(resolve(opts.dataDir), 'recordings', `${opts.callSid}.wav`)} (with RECORDING_STORE=file)`,
  );
  lines.push(`  listen: curl -H "Authorization: Bearer ${opts.tokenInShell}" ${url} -o ${opts.callSid}.wav`);
  return lines;
}

async function getJson(url: string, token: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(5_000),
  });
  const text = await response.text();
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: the status says enough.
  }
  return { status: response.status, body };
}
