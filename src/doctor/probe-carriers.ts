// Each configured carrier's credentials, checked with one signed request that changes nothing: the
// account (or balance, or call list) the credentials open. Twilio's check lives in probe-http.ts.
// Where a carrier has no credentials set, nothing is sent; its line says what that means.
import { createAppTokenSource } from '../carriers/vonage/app-token.js';
import type { Config } from '../config/types.js';
import { getJson } from './probe-http.js';
import { type CheckLine, fail, ok, unreachable, warn } from './report.js';

interface SignedProbe {
  carrier: string;
  /** The API base, for the line and for merging an unreachable host. */
  apiUrl: string;
  url: string;
  authorization: () => Promise<string>;
  /** The variables to check when the credentials are refused. */
  variables: string;
}

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

const trimmed = (url: string) => url.replace(/\/+$/, '');

/** The no-op request of every carrier whose credentials are set. */
export function carrierProbes(config: Config): SignedProbe[] {
  const probes: SignedProbe[] = [];
  const { telnyx, plivo, vonage, exotel } = config;
  if (telnyx.apiKey !== null) {
    probes.push({
      carrier: 'Telnyx',
      apiUrl: telnyx.apiUrl,
      url: `${trimmed(telnyx.apiUrl)}/v2/balance`,
      authorization: async () => `Bearer ${telnyx.apiKey}`,
      variables: 'TELNYX_API_KEY',
    });
  }
  if (plivo.authId !== null && plivo.authToken !== null) {
    probes.push({
      carrier: 'Plivo',
      apiUrl: plivo.apiUrl,
      url: `${trimmed(plivo.apiUrl)}/v1/Account/${encodeURIComponent(plivo.authId)}/`,
      authorization: async () => basic(plivo.authId!, plivo.authToken!),
      variables: 'PLIVO_AUTH_ID and PLIVO_AUTH_TOKEN',
    });
  }
  if (vonage.applicationId !== null && vonage.privateKey !== null) {
    // The application JWT calls use, signed with the private key: a key that does not match the
    // application is refused here exactly as it would be on a call.
    const token = createAppTokenSource({
      applicationId: vonage.applicationId,
      privateKey: vonage.privateKey,
    });
    probes.push({
      carrier: 'Vonage',
      apiUrl: vonage.apiUrl,
      url: `${trimmed(vonage.apiUrl)}/v1/calls?page_size=1`,
      authorization: async () => `Bearer ${await token()}`,
      variables: 'VONAGE_APPLICATION_ID and VONAGE_PRIVATE_KEY',
    });
  }
  if (exotel.accountSid !== null && exotel.apiKey !== null && exotel.apiToken !== null) {
    probes.push({
      carrier: 'Exotel',
      apiUrl: exotel.apiUrl,
      url: `${trimmed(exotel.apiUrl)}/v1/Accounts/${encodeURIComponent(exotel.accountSid)}`,
      authorization: async () => basic(exotel.apiKey!, exotel.apiToken!),
      variables: 'EXOTEL_ACCOUNT_SID, EXOTEL_API_KEY and EXOTEL_API_TOKEN',
    });
  }
  return probes;
}

export async function probeCarrier(probe: SignedProbe, timeoutMs: number): Promise<CheckLine> {
  const subject = `${probe.carrier} API ${probe.apiUrl}`;
  const answer = await getJson(probe.url, await probe.authorization(), timeoutMs);
  if (!answer.ok)
    return unreachable(`${probe.carrier} API`, probe.apiUrl, answer.problem, `${subject}: ${answer.problem}`);
  const { status } = answer;
  if (status >= 200 && status < 300) return ok(`${subject}: credentials accepted`);
  if (status === 401 || status === 403)
    return fail(`${subject}: credentials rejected (HTTP ${status}): check ${probe.variables}`);
  if (status === 429) return warn(`${subject}: rate limited (HTTP 429); the credentials were not checked`);
  return fail(`${subject}: answered HTTP ${status}`);
}

export async function carrierChecks(config: Config, timeoutMs: number): Promise<CheckLine[]> {
  return Promise.all(carrierProbes(config).map((probe) => probeCarrier(probe, timeoutMs)));
}
