// After a simulated call, `callbridge call` prints the call's post-call analysis (summary,
// sentiment, topics, intents) once the server has it. The server analyses after the call ended,
// never before, so this polls the admin API's `GET /v1/calls/:callSid`, bounded. A server that says
// analysis is off (`GET /`), or one that says nothing about it, gets no wait at all.
import type { CallAnalysis } from '../../store/call-analysis.js';

export interface AnalysisWaitOptions {
  server: string;
  callSid: string;
  /** Bearer token for the admin API; null when none could be found (`why` says where it looked). */
  token: { value: string } | { value: null; why: string };
  timeoutMs: number;
  intervalMs: number;
  signal?: AbortSignal;
}

/** Lines to print after the call; empty when the server does not analyse calls. */
export async function analysisReport(opts: AnalysisWaitOptions): Promise<string[]> {
  const base = opts.server.replace(/\/+$/, '');
  const info = await getJson(`${base}/`, null).catch(() => null);
  if ((info?.body as { analysis?: unknown } | undefined)?.analysis !== 'on') return [];
  if (opts.token.value === null) return [`analysis: not shown (${opts.token.why})`];
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    let answer: { status: number; body: unknown };
    try {
      answer = await getJson(`${base}/v1/calls/${encodeURIComponent(opts.callSid)}`, opts.token.value);
    } catch (err) {
      return [`analysis: not shown (cannot reach ${base}: ${(err as Error).message})`];
    }
    if (answer.status === 401 || answer.status === 403) {
      return ["analysis: not shown (the admin API refused the token: is it this server's ADMIN_TOKEN?)"];
    }
    const analysis = (answer.body as { analysis?: CallAnalysis } | null)?.analysis;
    if (answer.status === 200 && analysis) return formatAnalysisLines(analysis);
    if (Date.now() + opts.intervalMs > deadline || opts.signal?.aborted) {
      return [
        `analysis: not ready after ${Math.round(opts.timeoutMs / 1000)} s (GET /v1/calls/${opts.callSid} shows it later)`,
      ];
    }
    await new Promise((resolve) => setTimeout(resolve, opts.intervalMs));
  }
}

export function formatAnalysisLines(analysis: CallAnalysis): string[] {
  if (analysis.outcome !== 'ok')
    return [`analysis: ${analysis.outcome}${analysis.reason ? ` (${analysis.reason})` : ''}`];
  const score = analysis.sentimentScore === undefined ? '' : ` (${analysis.sentimentScore.toFixed(2)})`;
  const list = (items: string[] | undefined) => (items && items.length > 0 ? items.join('; ') : '(none)');
  return [
    'analysis:',
    `  summary:   ${analysis.summary ?? '(none)'}`,
    `  sentiment: ${analysis.sentiment ?? '(none)'}${score}`,
    `  topics:    ${list(analysis.topics)}`,
    `  intents:   ${list(analysis.intents)}`,
  ];
}

async function getJson(url: string, token: string | null): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, {
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(5_000),
  });
  const text = await response.text();
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON (a proxy's page, say): the status says enough.
  }
  return { status: response.status, body };
}
