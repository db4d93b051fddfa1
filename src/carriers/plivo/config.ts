// Plivo's variables (docs/protocols/plivo.md): the account's Auth ID and Auth Token (REST, and the
// token verifies X-Plivo-Signature-V3), and the API base.
import { type Env, envError, envString, envUrl } from '../../config/env.js';
import { BASE_URL } from '../../config/urls.js';

/** Plivo (docs/protocols/plivo.md section 1), read by readPlivo. */
export interface PlivoConfig {
  authId: string | null;
  authToken: string | null;
  apiUrl: string;
  /** NODE_ENV=production without an auth token: every Plivo request is refused. */
  refuseUnverified: boolean;
}

declare module '../../config/types.js' {
  interface CarrierConfigs {
    plivo: PlivoConfig;
  }
}

// Plivo's ids are uppercase letters and digits (MA… for accounts, SA… for subaccounts); the id goes
// into REST paths, so nothing else is accepted.
const AUTH_ID = /^[A-Za-z0-9]{10,64}$/;

export function readPlivo(env: Env, nodeEnv: string): PlivoConfig {
  const authId = envString(env, 'PLIVO_AUTH_ID') ?? null;
  const authToken = envString(env, 'PLIVO_AUTH_TOKEN') ?? null;
  if (authId !== null && !AUTH_ID.test(authId)) {
    throw envError('PLIVO_AUTH_ID', 'must be the account Auth ID (10 to 64 letters and digits)', authId);
  }
  if (authId !== null && authToken === null) {
    throw envError('PLIVO_AUTH_TOKEN', 'required when PLIVO_AUTH_ID is set');
  }
  if (authToken !== null && authId === null) {
    throw envError('PLIVO_AUTH_ID', 'required when PLIVO_AUTH_TOKEN is set');
  }
  const apiUrl = envUrl(env, 'PLIVO_API_URL', BASE_URL(['http', 'https'])) ?? 'https://api.plivo.com';
  return { authId, authToken, apiUrl, refuseUnverified: nodeEnv === 'production' && authToken === null };
}
