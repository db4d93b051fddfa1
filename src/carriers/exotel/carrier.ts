// Exotel as one entry of the carriers' list (src/carriers/registry.ts).
import type { Carrier } from '../carrier.js';
import { SIMULATED_CALLER_ID } from '../simulated.js';
import { createExotelAdapter } from './adapter.js';
import { type ExotelConfig, readExotel } from './config.js';
import { createExotelPlacer } from './placer.js';
import { createExotelRest } from './rest.js';

/** The account and flow of simulated Exotel calls when no flow is configured. */
const SIMULATED_EXOTEL_ACCOUNT = 'callbridgesim1';
const SIMULATED_EXOTEL_FLOW = `http://my.exotel.com/${SIMULATED_EXOTEL_ACCOUNT}/exoml/start_voice/1`;

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

export const exotelCarrier: Carrier<ExotelConfig> = {
  name: 'exotel',
  // Exotel signs nothing: its networks, once named, are what verify its requests.
  verifiedBy: ['EXOTEL_ALLOWED_CIDRS'],
  read: (env, { nodeEnv }) => readExotel(env, nodeEnv),
  hasCredentials: (s) => s.accountSid !== null || s.apiKey !== null || s.apiToken !== null,
  verifies: (settings) => settings.allowedCidrs !== null,
  sharedSecret: (settings) => settings.apiToken,
  createAdapter: (config, deps) =>
    createExotelAdapter(config, {
      placer: deps.placers?.find((placer) => placer.carrier === 'exotel') ?? null,
    }),

  /** Its REST API with credentials and a flow, else the simulated one. */
  createPlacer(config, { simulatedApiUrl, routedNumber, timeoutMs }) {
    const { accountSid, apiKey, apiToken, apiUrl, flowUrl } = config.exotel;
    const publicUrl = () => config.publicUrl;
    if (accountSid && apiKey && apiToken) {
      // Without a flow there is nothing for an answered call to run: Exotel places no calls here.
      if (flowUrl === null) return null;
      const rest = createExotelRest({ apiUrl, accountSid, apiKey, apiToken, timeoutMs });
      return createExotelPlacer({ rest, flowUrl, publicUrl, defaultFrom: routedNumber });
    }
    if (simulatedApiUrl === null) return null;
    const rest = createExotelRest({
      apiUrl: simulatedApiUrl,
      accountSid: SIMULATED_EXOTEL_ACCOUNT,
      apiKey: 'simulated',
      apiToken: 'simulated',
      timeoutMs,
    });
    return createExotelPlacer({
      rest,
      flowUrl: flowUrl ?? SIMULATED_EXOTEL_FLOW,
      publicUrl,
      defaultFrom: routedNumber ?? SIMULATED_CALLER_ID,
    });
  },

  credentialsProbe({ accountSid, apiKey, apiToken, apiUrl }) {
    if (accountSid === null || apiKey === null || apiToken === null) return null;
    return {
      label: 'Exotel API',
      apiUrl,
      url: `${apiUrl.replace(/\/+$/, '')}/v1/Accounts/${encodeURIComponent(accountSid)}`,
      authorization: async () => basic(apiKey, apiToken),
      variables: 'EXOTEL_ACCOUNT_SID, EXOTEL_API_KEY and EXOTEL_API_TOKEN',
    };
  },
};
