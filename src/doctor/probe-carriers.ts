// Each carrier of the list (src/carriers/registry.ts): whether its requests are verified, and its
// credentials checked with the one signed request it names that changes nothing (the account, a
// balance, a call list). Where a carrier has no credentials set, nothing is sent.
import { type Carrier, type CredentialsProbe, settingsOf } from '../carriers/carrier.js';
import { CARRIERS } from '../carriers/registry.js';
import type { Config } from '../config/types.js';
import { getJson } from './probe-http.js';
import { type CheckLine, fail, ok, unreachable, warn } from './report.js';

export async function probeCarrier(probe: CredentialsProbe, timeoutMs: number): Promise<CheckLine> {
  const subject = probe.subject ?? `${probe.label} ${probe.apiUrl}`;
  const answer = await getJson(probe.url, await probe.authorization(), timeoutMs);
  if (!answer.ok)
    return unreachable(probe.label, probe.apiUrl, answer.problem, `${subject}: ${answer.problem}`);
  const { status } = answer;
  if (status >= 200 && status < 300) {
    const state = probe.accountState?.(answer.body);
    if (state === undefined) return ok(`${subject}: credentials accepted`);
    if (state !== 'active') return fail(`${subject}: credentials accepted, but the account is ${state}`);
    return ok(`${subject}: credentials accepted (account ${state})`);
  }
  if (status === 401 || status === 403)
    return fail(`${subject}: credentials rejected (HTTP ${status}): check ${probe.variables}`);
  if (status === 404 && probe.accountState) return fail(`${subject}: no such account (HTTP 404)`);
  if (status === 429) return warn(`${subject}: rate limited (HTTP 429); the credentials were not checked`);
  return fail(`${subject}: answered HTTP ${status}`);
}

/** Whether a configured carrier's requests are verified; nothing for a carrier with nothing set. */
function verificationLine(config: Config, carrier: Carrier): CheckLine | undefined {
  const settings = settingsOf(config, carrier);
  const names = carrier.verifiedBy.join(' and ');
  const are = carrier.verifiedBy.length > 1 ? 'are' : 'is';
  if (carrier.verifies(settings)) return ok(`${names} ${are} set: carrier requests are verified`);
  if (!carrier.hasCredentials(settings)) return undefined;
  return warn(`${names} ${are} not set: ${carrier.name} requests are not verified`);
}

export async function carrierChecks(
  config: Config,
  timeoutMs: number,
  carriers: readonly Carrier[] = CARRIERS,
): Promise<CheckLine[]> {
  const lines = carriers.map(async (carrier) => {
    const verification = verificationLine(config, carrier);
    const probe = carrier.credentialsProbe(settingsOf(config, carrier));
    const reached = probe === null ? [] : [await probeCarrier(probe, timeoutMs)];
    return verification === undefined ? reached : [verification, ...reached];
  });
  const checked = (await Promise.all(lines)).flat();
  const first = carriers[0];
  if (checked.length > 0 || first === undefined) return checked;
  return [
    warn(
      `${first.verifiedBy.join(' and ')} are not set, nor any other carrier's: carrier requests are not ` +
        "verified (NODE_ENV=production refuses to start without one carrier's)",
    ),
  ];
}
