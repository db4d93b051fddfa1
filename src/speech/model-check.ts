// The think model check at start: one warning line per profile model the agent host does not
// list, or one line saying the listing could not be read. Only a warning: the service may be down
// right now, and calls may still work (`callbridge doctor` fails on the same finding).
import type { Logger } from 'pino';
import type { AgentProfile } from '../config/types.js';
import type { SpeechApi } from './http.js';
import { listThinkModels, THINK_MODELS_PATH, unknownThinkModels } from './models.js';

export async function warnUnknownThinkModels(
  profiles: Record<string, AgentProfile>,
  api: SpeechApi,
  logger: Logger,
): Promise<void> {
  let known: Set<string>;
  try {
    known = (await listThinkModels(api)).names;
  } catch (err) {
    logger.warn(
      { err: (err as Error).message },
      `could not check the profiles' think models (${THINK_MODELS_PATH})`,
    );
    return;
  }
  for (const { profile, model } of unknownThinkModels(profiles, known)) {
    logger.warn(
      { profile, model },
      `profile ${profile}: think model ${JSON.stringify(model)} is not listed by the agent host`,
    );
  }
}
