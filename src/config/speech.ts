// What callbridge asks of the speech service besides the agent socket: post-call analysis
// (`ANALYSIS`) and rendered prompts (config/prompts.json).
import { type Env, envOneOf, envString, envUrl } from './env.js';
import { loadPrompts, type PromptsConfig } from './prompts.js';
import { BASE_URL } from './urls.js';

export interface SpeechConfig {
  /** `ANALYSIS=on`: each ended call's transcript is analysed with `POST $SPEECH_API_URL/v1/read`. */
  analysis: boolean;
  /**
   * `SPEECH_API_URL` when set. With the built-in local agent the speech REST calls go to it unless
   * this is set; with a hosted agent they go to `agent.speechApiUrl` (the same value, or the region's).
   */
  apiUrlOverride: string | null;
  /** config/prompts.json; null: the bundled recordings only. */
  prompts: PromptsConfig | null;
}

/** `localAgent`: no agent host is configured, so the built-in agent answers calls. */
export function readSpeech(env: Env, configDir: string, cwd: string, localAgent: boolean): SpeechConfig {
  // Analysis is on by default where it costs nothing: the built-in agent analyses locally.
  const analysis = envOneOf(env, 'ANALYSIS', ['on', 'off'], localAgent ? 'on' : 'off') === 'on';
  return {
    analysis,
    apiUrlOverride:
      envString(env, 'SPEECH_API_URL') === undefined
        ? null
        : (envUrl(env, 'SPEECH_API_URL', BASE_URL(['http', 'https'])) ?? null),
    prompts: loadPrompts(configDir, cwd),
  };
}
