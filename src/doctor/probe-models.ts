// Model checks for `callbridge doctor` (docs/protocols/speech-service.md): each profile's think
// model must be listed by the agent host (asked at the agent host or the region's API host, never
// the global API host, which answers 404); listen and speak models must follow the family rules.
// With the built-in local agent, its own list is the listing.
import type { Config } from '../config/types.js';
import { THINK_MODELS } from '../sim/agent/think-models.js';
import {
  agentRestBase,
  listThinkModels,
  type ThinkModelListing,
  modelFamilyProblems,
  THINK_MODELS_PATH,
  unknownThinkModels,
} from '../speech/models.js';
import { type CheckLine, fail, ok } from './report.js';

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
    try {
      known = await listThinkModels({
        baseUrl: base,
        authorization: `Token ${config.agent.apiKey}`,
        timeoutMs,
      });
    } catch (err) {
      return [fail(`think models: cannot list them at ${source}: ${(err as Error).message}`)];
    }
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
