// Plivo as one entry of the carriers' list (src/carriers/registry.ts).
import type { Carrier } from '../carrier.js';
import { SIMULATED_CALLER_ID } from '../simulated.js';
import { createPlivoAdapter, PLIVO_REST_TIMEOUT_MS, PLIVO_SIMULATED_AUTH_ID } from './adapter.js';
import { type PlivoConfig, readPlivo } from './config.js';
import { createPlivoPlacer } from './placer.js';
import { createPlivoRest } from './rest.js';

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

export const plivoCarrier: Carrier<PlivoConfig> = {
  name: 'plivo',
  verifiedBy: ['PLIVO_AUTH_ID', 'PLIVO_AUTH_TOKEN'],
  read: (env, { nodeEnv }) => readPlivo(env, nodeEnv),
  hasCredentials: (settings) => settings.authId !== null || settings.authToken !== null,
  verifies: (settings) => settings.authToken !== null,
  sharedSecret: (settings) => settings.authToken,
  createAdapter: (config, deps) =>
    createPlivoAdapter(config, {
      logger: deps.logger,
      metrics: deps.metrics,
      ...(deps.simulatedApiUrl !== undefined ? { simulatedApiUrl: deps.simulatedApiUrl } : {}),
      ...(deps.claimOnce ? { claimOnce: deps.claimOnce } : {}),
      simulationKeys: deps.simulationKeys,
    }),

  /** Its REST API with credentials, else the simulated one; null with neither. */
  createPlacer(config, { simulatedApiUrl, routedNumber }) {
    const { authId, authToken, apiUrl } = config.plivo;
    const api =
      authId !== null && authToken !== null
        ? { apiUrl, authId, authToken, defaultFrom: routedNumber }
        : simulatedApiUrl !== null
          ? // The simulated API takes any credentials whose Auth ID matches the path.
            {
              apiUrl: simulatedApiUrl,
              authId: PLIVO_SIMULATED_AUTH_ID,
              authToken: 'simulated',
              defaultFrom: routedNumber ?? SIMULATED_CALLER_ID,
            }
          : null;
    if (api === null) return null;
    const publicUrl = () => config.publicUrl;
    const rest = createPlivoRest({ ...api, publicUrl, timeoutMs: PLIVO_REST_TIMEOUT_MS });
    return createPlivoPlacer({ rest, publicUrl, defaultFrom: api.defaultFrom });
  },

  credentialsProbe({ authId, authToken, apiUrl }) {
    if (authId === null || authToken === null) return null;
    return {
      label: 'Plivo API',
      apiUrl,
      url: `${apiUrl.replace(/\/+$/, '')}/v1/Account/${encodeURIComponent(authId)}/`,
      authorization: async () => basic(authId, authToken),
      variables: 'PLIVO_AUTH_ID and PLIVO_AUTH_TOKEN',
    };
  },
};
