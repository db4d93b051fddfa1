// Reachability of the configured REST hosts, each with one read-only request a healthy deployment
// answers 200: the speech API's think-model listing and the carrier's own account record.
import type { Config } from '../config/types.js';
import { httpJson } from './http-request.js';
import { describeNetworkError } from './network-error.js';
import { type CheckLine, fail, ok, unreachable, warn } from './report.js';

const THINK_MODELS_PATH = '/v1/agent/settings/think/models';

export type Answer = { ok: true; status: number; body: unknown } | { ok: false; problem: string };

/** A GET that never follows a redirect (it would carry the credentials elsewhere). */
export async function getJson(url: string, authorization: string, timeoutMs: number): Promise<Answer> {
  try {
    const res = await httpJson(url, { headers: { authorization, accept: 'application/json' }, timeoutMs });
    return { ok: true, status: res.status, body: res.body ?? null };
  } catch (err) {
    return { ok: false, problem: describeNetworkError(err, timeoutMs) };
  }
}

export async function probeSpeechApi(agent: Config['agent'], timeoutMs: number): Promise<CheckLine> {
  const subject = `speech API ${agent.speechApiUrl}`;
  const answer = await getJson(
    `${agent.speechApiUrl}${THINK_MODELS_PATH}`,
    `Token ${agent.apiKey}`,
    timeoutMs,
  );
  if (!answer.ok)
    return unreachable('speech API', agent.speechApiUrl, answer.problem, `${subject}: ${answer.problem}`);
  const { status, body } = answer;
  if (status >= 200 && status < 300) {
    const models = (body as { models?: unknown } | null)?.models;
    const count = Array.isArray(models) ? `, ${models.length} think models` : '';
    return ok(`${subject}: answers (HTTP ${status}${count})`);
  }
  if (status === 401 || status === 403) {
    return fail(`${subject}: credentials rejected (HTTP ${status}): check AGENT_API_KEY`);
  }
  if (status === 429) return warn(`${subject}: rate limited (HTTP 429)`);
  return fail(`${subject}: ${THINK_MODELS_PATH} answered HTTP ${status}`);
}

/** `GET /2010-04-01/Accounts/{Sid}.json` with Basic auth: the credentials Twilio signs requests with. */
