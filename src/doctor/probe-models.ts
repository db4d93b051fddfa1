// Model checks for `callbridge doctor` (docs/protocols/speech-service.md): each profile's think
// model must be listed by the agent host (asked at the agent host or the region's API host, never
// the global API host, which answers 404); listen and speak models must follow the family rules.
// With the built-in local agent, its own list is the listing.
import type { Config } from '../config/types.js';
import { THINK_MODELS } from '../sim/agent/think-models.js';
import {
  agentRestBase,
  modelFamilyProblems,
  parseThinkModelListing,
  THINK_MODELS_PATH,
  type ThinkModelListing,
  unknownThinkModels,
} from '../speech/models.js';
import { describeErrorJson } from '../speech/http.js';
import { getJson } from './probe-http.js';
import { type CheckLine, fail, ok, unreachable } from './report.js';

export async function modelChecks(config: Config, timeoutMs: number): Promise<CheckLine[]> {
  return [...(await thinkModelLines(config, timeoutMs)), ...familyLines(config)];
}

async function thinkModelLines(config: Config, timeoutMs: number): Promise<CheckLine[]> {
  let known: ThinkModelListing;
  let source: string;
  if (config.agent.url === null) {
    known = { count: THINK_MODELS.length, names: new Set(THINK_MODELS.map((model) => model.id)) };
    source = 'the built-in local agent';
  } else {
    const base = agentRestBase(config.agent.url);
    source = `${base}${THINK_MODELS_PATH}`;
    const answer = await getJson(source, `Token ${config.agent.apiKey}`, timeoutMs);
    if (!answer.ok) {
      const text = `think models: cannot list them at ${source}: ${answer.problem}`;
      return [unreachable('think models', base, answer.problem, text)];
    }
    if (answer.status < 200 || answer.status > 299) {
      const { serviceCode, message } = describeErrorJson(answer.body);
      const detail = [serviceCode, message].filter((part) => part !== undefined).join(': ');
      const said = `GET ${THINK_MODELS_PATH} answered HTTP ${answer.status}${detail ? ` ${detail}` : ''}`;
      return [fail(`think models: cannot list them at ${source}: ${said}`)];
    }
    known = parseThinkModelListing(answer.body);
  }
  const unknown = unknownThinkModels(config.profiles, known.names);
  if (unknown.length === 0)
    return [ok(`think models: every profile's model is listed by ${source} (${known.count} listed)`)];
  return unknown.map(({ profile, model }) =>
    fail(
      `profile ${profile}: think model ${JSON.stringify(model)} is not listed by ${source} (${known.count} listed)`,
    ),
  );
}

function familyLines(config: Config): CheckLine[] {
  const lines: CheckLine[] = [];
  for (const [name, profile] of Object.entries(config.profiles)) {
    for (const problem of modelFamilyProblems(profile)) lines.push(fail(`profile ${name}: ${problem}`));
  }
  if (lines.length > 0) return lines;
  return [
    ok(
      'listen and speak models follow the family rules (listen std- or turn-; speak lyric- on v1, turn- on v2)',
    ),
  ];
}
