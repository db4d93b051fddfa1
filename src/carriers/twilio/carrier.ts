// Twilio as one entry of the carriers' list (src/carriers/registry.ts).
import type { Carrier } from '../carrier.js';
import { SIMULATED_CALLER_ID } from '../simulated.js';
import { createTwilioAdapter } from './adapter.js';
import { readTwilio, type TwilioConfig } from './config.js';
import { createTwilioPlacer } from './placer.js';
import { createTwilioRest } from './rest.js';

export const twilioCarrier: Carrier<TwilioConfig> = {
  name: 'twilio',
  verifiedBy: ['TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN'],
  read: (env) => readTwilio(env),
  hasCredentials: (settings) => settings.accountSid !== null || settings.authToken !== null,
  verifies: (settings) => settings.authToken !== null,
  sharedSecret: (settings) => settings.authToken,
  createAdapter: (config, deps) => createTwilioAdapter(config, { simulationKeys: deps.simulationKeys }),

  createPlacer(config, { simulatedApiUrl, routedNumber, timeoutMs }) {
    const { accountSid, authToken, apiUrl } = config.twilio;
    const publicUrl = () => config.publicUrl;
    if (accountSid && authToken) {
      const rest = createTwilioRest({ apiUrl, accountSid, authToken, timeoutMs });
      return createTwilioPlacer({ rest, publicUrl, defaultFrom: routedNumber });
    }
    if (simulatedApiUrl === null) return null;
    // The simulated API takes any credentials; these name no account.
    const rest = createTwilioRest({
      apiUrl: simulatedApiUrl,
      accountSid: 'ACsimulated',
      authToken: 'simulated',
      timeoutMs,
    });
    return createTwilioPlacer({ rest, publicUrl, defaultFrom: routedNumber ?? SIMULATED_CALLER_ID });
  },

  credentialsProbe({ accountSid, authToken, apiUrl }) {
    if (accountSid === null || authToken === null) return null;
    return {
      label: 'Twilio API',
      apiUrl,
      subject: `Twilio API ${apiUrl}, account ${accountSid}`,
      url: `${apiUrl}/2010-04-01/Accounts/${accountSid}.json`,
      authorization: async () => `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`,
      variables: 'TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN',
      accountState: (body) => {
        const state = (body as { status?: unknown } | null)?.status;
        return typeof state === 'string' ? state : undefined;
      },
    };
  },
};
