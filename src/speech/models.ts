// Model checks (docs/protocols/speech-service.md sections 3, 4 and 11):
//   - each profile's think model must be one the agent host lists at
//     `GET /v1/agent/settings/think/models`, asked of the agent host or the region's API host (the
//     global API host answers 404, section 7);
//   - listen models are of the speech-to-text families (`std-` on the v1 listen path, `turn-` on
//     v2; a bare `turn` is not a model); speak models follow the v1/v2 family rule.
import type { AgentProfile } from '../config/types.js';
import { speakModelProblem } from '../config/speak-rules.js';
import { type SpeechApi, speechRequest } from './http.js';

export const THINK_MODELS_PATH = '/v1/agent/settings/think/models';
const MAX_ANSWER_BYTES = 1024 * 1024;

/** The REST base of an agent host: the socket's host with `http(s)` for `ws(s)`. */
export function agentRestBase(agentUrl: string): string {
  return agentUrl.replace(/^ws(s?):\/\//i, 'http$1://');
}

export interface ThinkModelListing {
  /** Models listed. */
  count: number;
  /** Every name a listed model goes by (its id, model and name fields). */
  names: Set<string>;
}

/** The listing. Its body is not specified (4.5), so strings and `{id|model|name}` objects are read. */
export async function listThinkModels(api: SpeechApi): Promise<ThinkModelListing> {
  const answer = await speechRequest(api, {
    method: 'GET',
    path: THINK_MODELS_PATH,
    maxBytes: MAX_ANSWER_BYTES,
  });
  let body: unknown;
  try {
    body = JSON.parse(answer.body.toString('utf8'));
  } catch {
    return { count: 0, names: new Set() };
  }
  return parseThinkModelListing(body);
}

/** The names in a think-model listing: an array of names or objects, bare or under `models`. */
export function parseThinkModelListing(body: unknown): ThinkModelListing {
  const list = Array.isArray(body) ? body : (body as { models?: unknown } | null)?.models;
  const entries = Array.isArray(list) ? list : [];
  const names = new Set<string>();
  for (const entry of entries) {
    if (typeof entry === 'string') names.add(entry);
    else if (typeof entry === 'object' && entry !== null) {
      for (const key of ['id', 'model', 'name'] as const) {
        const value = (entry as Record<string, unknown>)[key];
        if (typeof value === 'string') names.add(value);
      }
    }
  }
  return { count: entries.length, names };
}

export interface UnknownThinkModel {
  profile: string;
  model: string;
}

/** Think models of every profile (each entry of a chain) that the listing does not name. */
export function unknownThinkModels(
  profiles: Record<string, AgentProfile>,
  known: ReadonlySet<string>,
): UnknownThinkModel[] {
  const unknown: UnknownThinkModel[] = [];
  for (const [name, profile] of Object.entries(profiles)) {
    for (const spec of profile.think) {
      const model = spec.provider.model;
      // A provider with its own endpoint answers for its own models: the listing cannot vouch for it.
      if (typeof model !== 'string' || spec.endpoint !== undefined) continue;
      if (!known.has(model)) unknown.push({ profile: name, model });
    }
  }
  return unknown;
}

/** speech-service.md section 3: `std-` (and the v1 path's older `std`, `enhanced`, `base`) or `turn-<name>`. */
export function listenModelProblem(model: string): string | null {
  if (/^std(-[a-z0-9]+)*$/i.test(model) || model === 'enhanced' || model === 'base') return null;
  if (/^turn-[a-z0-9]+(-[a-z0-9]+)*$/i.test(model)) return null;
  if (model === 'turn') return 'a bare "turn" is not a model; name one, such as turn-general-en';
  return `${JSON.stringify(model)} is not a speech-to-text model (std- or turn- family)`;
}

/** Every family-rule problem of a profile's listen and speak models, as lines. */
export function modelFamilyProblems(profile: AgentProfile): string[] {
  const problems: string[] = [];
  const listen = profile.listen?.provider.model;
  if (typeof listen === 'string') {
    const problem = listenModelProblem(listen);
    if (problem !== null) problems.push(`listen model ${problem}`);
  }
  for (const [i, spec] of (profile.speak ?? []).entries()) {
    const problem = speakModelProblem(spec.provider.version, spec.provider.model);
    if (problem !== null) problems.push(`speak${profile.speak!.length > 1 ? ` entry ${i}` : ''} ${problem}`);
  }
  return problems;
}
