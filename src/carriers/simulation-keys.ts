// The simulated carrier's own signing keys (docs/security.md, "The simulated carrier"). Outside
// production, carriers without any credentials are served by the built-in simulated carrier, which
// signs its webhooks as the real carrier would, but with these keys, never an account's secret. The server trusts them for those carriers only: a request signed with
// one is a simulated call's, verified; an unsigned request stays unverified; a carrier with
// credentials of its own never accepts them.
import { createHash, createHmac, createPrivateKey, createPublicKey } from 'node:crypto';

export interface SimulationKeys {
  /** Signs the simulated Twilio's requests (X-Twilio-Signature). */
  twilioAuthToken: string;
  /** Signs the simulated Plivo's requests (X-Plivo-Signature-V3). */
  plivoAuthToken: string;
  /** Signs the simulated Vonage's webhook JWTs. */
  vonageSignatureSecret: string;
  /** The simulated Telnyx's Ed25519 key: the public half (base64, 32 bytes) verifies, the seed signs. */
  telnyxPublicKey: string;
  telnyxPrivateSeed: string;
}

// PKCS#8 wrapping of a raw Ed25519 seed (RFC 8410): a fixed prefix, then the 32 bytes.
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * The simulation's keys, derived from the server's stream-token secret under labels of their own, so
 * every instance of a fleet (and a simulated carrier they share, `SIM_CARRIER_API_URL`) holds the
 * same ones without any carrier secret being involved.
 */
export function simulationKeysFor(streamTokenSecret: string): SimulationKeys {
  const derive = (label: string) =>
    createHmac('sha256', streamTokenSecret).update(`callbridge simulated carrier ${label}`).digest();
  const seed = derive('telnyx ed25519 seed');
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
  return {
    twilioAuthToken: derive('twilio').toString('base64url'),
    plivoAuthToken: derive('plivo').toString('base64url'),
    vonageSignatureSecret: derive('vonage').toString('base64url'),
    telnyxPublicKey: Buffer.from(jwk.x ?? '', 'base64url').toString('base64'),
    telnyxPrivateSeed: seed.toString('base64'),
  };
}

/** The environment a simulated callee signs with, for the carriers the simulation serves. */
export function simulationSigningEnv(
  keys: SimulationKeys,
  carriers: readonly string[],
  telnyxSeedVariable: string,
): Record<string, string | undefined> {
  const only = (carrier: string, value: string) => (carriers.includes(carrier) ? value : undefined);
  return {
    TWILIO_AUTH_TOKEN: only('twilio', keys.twilioAuthToken),
    PLIVO_AUTH_TOKEN: only('plivo', keys.plivoAuthToken),
    VONAGE_SIGNATURE_SECRET: only('vonage', keys.vonageSignatureSecret),
    TELNYX_PUBLIC_KEY: only('telnyx', keys.telnyxPublicKey),
    [telnyxSeedVariable]: only('telnyx', keys.telnyxPrivateSeed),
  };
}
/**
 * A name for a set of simulation keys that reveals nothing of them: the server shows it in `GET /`,
 * so `callbridge call` can pick the keys of the very server it calls (docs/security.md).
 */
export function simulationKeyId(keys: SimulationKeys): string {
  const hash = createHash('sha256').update('callbridge simulation key id');
  for (const value of [
    keys.twilioAuthToken,
    keys.plivoAuthToken,
    keys.vonageSignatureSecret,
    keys.telnyxPublicKey,
  ]) {
    hash.update(`\0${value}`);
  }
  return hash.digest('hex').slice(0, 16);
}

/** What `GET /` says of the simulation: its key id and the carriers it serves (no key itself). */
export function describeSimulation(
  keys: SimulationKeys,
  carriers: string[],
): { keyId: string; carriers: string[] } {
  return { keyId: simulationKeyId(keys), carriers };
}
