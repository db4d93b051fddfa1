// Telnyx as one entry of the carriers' list (src/carriers/registry.ts).
import type { Carrier } from '../carrier.js';
import { SIMULATED_CALLER_ID, SIMULATED_TELNYX_CONNECTION_ID } from '../simulated.js';
import { createTelnyxAdapter } from './adapter.js';
import { readTelnyx, type TelnyxConfig } from './config.js';
import { createTelnyxPlacer } from './placer.js';
import { createTelnyxRest } from './rest.js';

export const telnyxCarrier: Carrier<TelnyxConfig> = {
  name: 'telnyx',
  verifiedBy: ['TELNYX_PUBLIC_KEY'],
  read: (env, { nodeEnv }) => readTelnyx(env, nodeEnv),
  hasCredentials: (s) => s.apiKey !== null || s.publicKeys.length > 0 || s.connectionId !== null,
  verifies: (settings) => settings.publicKeys.length > 0,
  sharedSecret: (settings) => settings.apiKey,
  createAdapter: (config, deps) =>
    createTelnyxAdapter(config, {
      logger: deps.logger,
      metrics: deps.metrics,
      ...(deps.simulatedApiUrl !== undefined ? { simulatedApiUrl: deps.simulatedApiUrl } : {}),
      simulationKeys: deps.simulationKeys,
    }),

  /** Its REST API with a key and a Call Control application, else the simulated one. */
  createPlacer(config, { simulatedApiUrl, routedNumber, timeoutMs }) {
    const { apiKey, apiUrl, connectionId } = config.telnyx;
    const api =
      apiKey !== null
        ? // Outbound calls need the Call Control application to place them through.
          connectionId !== null
          ? { apiUrl, apiKey, connectionId, defaultFrom: routedNumber }
          : null
        : simulatedApiUrl !== null
          ? {
              apiUrl: simulatedApiUrl,
              apiKey: 'simulated',
              connectionId: connectionId ?? SIMULATED_TELNYX_CONNECTION_ID,
              defaultFrom: routedNumber ?? SIMULATED_CALLER_ID,
            }
          : null;
    if (api === null) return null;
    const rest = createTelnyxRest({ ...api, timeoutMs });
    return createTelnyxPlacer({ rest, publicUrl: () => config.publicUrl, defaultFrom: api.defaultFrom });
  },

  credentialsProbe({ apiKey, apiUrl }) {
    if (apiKey === null) return null;
    return {
      label: 'Telnyx API',
      apiUrl,
      url: `${apiUrl.replace(/\/+$/, '')}/v2/balance`,
      authorization: async () => `Bearer ${apiKey}`,
      variables: 'TELNYX_API_KEY',
    };
  },
};
