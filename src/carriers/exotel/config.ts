// The Exotel variables (docs/protocols/exotel.md): the account and its API key and token, for REST
// and for Basic auth on the media upgrade, and the flow outbound calls run once answered. Each bad
// value is a one-line error.
import { isAddressOrCidr } from '../../config/cidrs.js';
import { type Env, envError, envList, envString, envUrl } from '../../config/env.js';
import { BASE_URL, ENDPOINT_URL } from '../../config/urls.js';

/** Exotel (docs/protocols/exotel.md): REST and Basic auth on the media upgrade. */
export interface ExotelConfig {
  accountSid: string | null;
  apiKey: string | null;
  apiToken: string | null;
  apiUrl: string;
  /** The Exotel flow (holding the Voicebot applet) an outbound call runs once answered; null: no outbound calls. */
  flowUrl: string | null;
  /** `EXOTEL_ALLOWED_CIDRS`: where Exotel's requests must come from; null: unset (any, unverified). */
  allowedCidrs: string[] | null;
}

declare module '../../config/types.js' {
  interface CarrierConfigs {
    exotel: ExotelConfig;
  }
}

const ACCOUNT_SID = /^[A-Za-z0-9_-]{1,64}$/;
// The key is the user name of Basic auth, so it may not hold a colon.
const API_KEY = /^[A-Za-z0-9._-]{1,128}$/;
const API_TOKEN = /^[\x21-\x7e]{1,256}$/;

export function readExotel(env: Env, nodeEnv: string): ExotelConfig {
  const accountSid = envString(env, 'EXOTEL_ACCOUNT_SID') ?? null;
  if (accountSid !== null && !ACCOUNT_SID.test(accountSid)) {
    throw envError('EXOTEL_ACCOUNT_SID', 'must be 1 to 64 letters, digits, _ or -', accountSid);
  }
  const apiKey = envString(env, 'EXOTEL_API_KEY') ?? null;
  if (apiKey !== null && !API_KEY.test(apiKey)) {
    throw envError('EXOTEL_API_KEY', 'must be 1 to 128 letters, digits, ., _ or -', apiKey);
  }
  const apiToken = envString(env, 'EXOTEL_API_TOKEN') ?? null;
  if (apiToken !== null && !API_TOKEN.test(apiToken)) {
    throw envError('EXOTEL_API_TOKEN', 'must be 1 to 256 printable characters without spaces');
  }
  if (apiKey !== null && apiToken === null) {
    throw envError('EXOTEL_API_TOKEN', 'required when EXOTEL_API_KEY is set');
  }
  if (apiToken !== null && apiKey === null) {
    throw envError('EXOTEL_API_KEY', 'required when EXOTEL_API_TOKEN is set');
  }
  if (nodeEnv === 'production' && accountSid !== null && apiKey === null) {
    throw envError(
      'EXOTEL_API_KEY',
      'required when NODE_ENV=production and EXOTEL_ACCOUNT_SID is set, with EXOTEL_API_TOKEN, so media upgrades are authenticated',
    );
  }
  const apiUrl = envUrl(env, 'EXOTEL_API_URL', BASE_URL(['http', 'https'])) ?? 'https://api.exotel.com';
  // The flow holding the Voicebot applet: `http://my.exotel.com/{sid}/exoml/start_voice/{app_id}`.
  const flowUrl = envUrl(env, 'EXOTEL_FLOW_URL', ENDPOINT_URL(['http', 'https'])) ?? null;
  return { accountSid, apiKey, apiToken, apiUrl, flowUrl, allowedCidrs: readAllowedCidrs(env) };
}

/**
 * The networks Exotel's requests must come from (docs/security.md): Exotel signs nothing, so its
 * source address is the only proof a request is Exotel's. Unset: null (any address, unverified).
 */
function readAllowedCidrs(env: Env): string[] | null {
  if (envString(env, 'EXOTEL_ALLOWED_CIDRS') === undefined) return null;
  const entries = envList(env, 'EXOTEL_ALLOWED_CIDRS');
  if (entries.length === 0)
    throw envError('EXOTEL_ALLOWED_CIDRS', 'must name at least one IP address or CIDR');
  for (const entry of entries) {
    if (!isAddressOrCidr(entry))
      throw envError('EXOTEL_ALLOWED_CIDRS', 'each entry must be an IP address or CIDR', entry);
  }
  return entries;
}
