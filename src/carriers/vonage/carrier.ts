// Vonage as one entry of the carriers' list (src/carriers/registry.ts).
import type { Carrier } from '../carrier.js';
import { SIMULATED_CALLER_ID } from '../simulated.js';
import { createVonageAdapter, vonageRestFor } from './adapter.js';
import { createAppTokenSource } from './app-token.js';
import { readVonage, type VonageConfig } from './config.js';
import { createVonagePlacer } from './placer.js';

export const vonageCarrier: Carrier<VonageConfig> = {
  name: 'vonage',
  verifiedBy: ['VONAGE_SIGNATURE_SECRET'],
  read: (env, { nodeEnv, cwd }) => readVonage(env, nodeEnv, cwd),
  hasCredentials: (s) =>
    s.applicationId !== null || s.privateKey !== null || s.signatureSecrets.length > 0 || s.apiKey !== null,
  verifies: (settings) => settings.signatureSecrets.length > 0,
  sharedSecret: (settings) => settings.signatureSecrets[0] ?? null,
  createAdapter: (config, deps) =>
    createVonageAdapter(config, {
      simulationKeys: deps.simulationKeys,
      ...(deps.claimOnce ? { claimOnce: deps.claimOnce } : {}),
      ...(deps.simulatedApiUrl !== undefined ? { simulatedApiUrl: deps.simulatedApiUrl } : {}),
    }),

  createPlacer(config, { simulatedApiUrl, routedNumber, timeoutMs }) {
    const rest = vonageRestFor(config, { simulatedApiUrl, timeoutMs });
    if (rest === null) return null;
    const real = config.vonage.applicationId !== null && config.vonage.privateKey !== null;
    return createVonagePlacer({
      rest,
      publicUrl: () => config.publicUrl,
      defaultFrom: real ? routedNumber : (routedNumber ?? SIMULATED_CALLER_ID),
    });
  },

  credentialsProbe({ applicationId, privateKey, apiUrl }) {
    if (applicationId === null || privateKey === null) return null;
    // The application JWT calls use, signed with the private key: a key that does not match the
    // application is refused here exactly as it would be on a call.
    const token = createAppTokenSource({ applicationId, privateKey });
    return {
      label: 'Vonage API',
      apiUrl,
      url: `${apiUrl.replace(/\/+$/, '')}/v1/calls?page_size=1`,
      authorization: async () => `Bearer ${await token()}`,
      variables: 'VONAGE_APPLICATION_ID and VONAGE_PRIVATE_KEY',
    };
  },
};
