// Twilio's variables (docs/protocols/twilio.md): the account SID and auth token (REST, and the token
// verifies X-Twilio-Signature), and the API base.
import { type Env, envError, envString, envUrl } from '../../config/env.js';
import { BASE_URL } from '../../config/urls.js';

export interface TwilioConfig {
  accountSid: string | null;
  authToken: string | null;
  apiUrl: string;
}

declare module '../../config/types.js' {
  interface CarrierConfigs {
    twilio: TwilioConfig;
  }
}

const TWILIO_SID = /^AC[0-9a-fA-F]{32}$/;

export function readTwilio(env: Env): TwilioConfig {
  const accountSid = envString(env, 'TWILIO_ACCOUNT_SID') ?? null;
  const authToken = envString(env, 'TWILIO_AUTH_TOKEN') ?? null;
  if (accountSid !== null && !TWILIO_SID.test(accountSid)) {
    throw envError('TWILIO_ACCOUNT_SID', 'must be AC followed by 32 hexadecimal digits', accountSid);
  }
  if (accountSid !== null && authToken === null) {
    throw envError('TWILIO_AUTH_TOKEN', 'required when TWILIO_ACCOUNT_SID is set');
  }
  if (authToken !== null && accountSid === null) {
    throw envError('TWILIO_ACCOUNT_SID', 'required when TWILIO_AUTH_TOKEN is set');
  }
  const apiUrl = envUrl(env, 'TWILIO_API_URL', BASE_URL(['http', 'https'])) ?? 'https://api.twilio.com';
  return { accountSid, authToken, apiUrl };
}
