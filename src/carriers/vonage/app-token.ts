// The application JWT Vonage's REST API takes as `Authorization: Bearer` (docs/protocols/vonage.md):
// RS256 with the application's private key, claims application_id, iat, exp, jti. One token serves
// every request for a short while, so a burst of hang-ups signs once.
import { createPrivateKey, generateKeyPair, type KeyObject, randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';

export interface AppTokenOptions {
  applicationId: string;
  /** PEM text of the application's RSA private key. */
  privateKey: string;
  /** How long a token is valid. */
  ttlMs?: number;
  /** How long a token is reused; well inside its validity so it never expires in flight. */
  reuseMs?: number;
  nowMs?: () => number;
}

export type AppTokenSource = () => Promise<string>;

const DEFAULT_TTL_MS = 5 * 60_000;
const DEFAULT_REUSE_MS = 60_000;

export function createAppTokenSource(opts: AppTokenOptions): AppTokenSource {
  // Parsed once: the PEM is checked when configuration loads, so this does not throw on a call.
  const key: KeyObject = createPrivateKey(opts.privateKey);
  const ttlMs = opts.ttlMs ?? DEFAULT_TTL_MS;
  const reuseMs = Math.min(opts.reuseMs ?? DEFAULT_REUSE_MS, ttlMs / 2);
  const now = opts.nowMs ?? Date.now;
  let cached: { token: Promise<string>; mintedAtMs: number } | undefined;

  function mint(nowMs: number): Promise<string> {
    const iat = Math.floor(nowMs / 1000);
    return new SignJWT({ application_id: opts.applicationId })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
      .setIssuedAt(iat)
      .setExpirationTime(iat + Math.floor(ttlMs / 1000))
      .setJti(randomUUID())
      .sign(key);
  }

  return () => {
    const nowMs = now();
    if (cached === undefined || nowMs - cached.mintedAtMs >= reuseMs || nowMs < cached.mintedAtMs) {
      const token = mint(nowMs);
      const entry = { token, mintedAtMs: nowMs };
      cached = entry;
      // A failed signing is not kept: the next request tries again.
      token.catch(() => {
        if (cached === entry) cached = undefined;
      });
    }
    return cached.token;
  };
}

/** The application id the simulated Voice API's tokens name. */
export const SIMULATED_APPLICATION_ID = '00000000-0000-4000-8000-000000000000';

let simulatedKey: Promise<string> | undefined;

/**
 * Tokens for the built-in simulated Voice API, which knows no application key and checks a token's
 * shape only: signed with a key made once per process, on the first request.
 */
export function simulatedAppTokenSource(): AppTokenSource {
  simulatedKey ??= new Promise<string>((resolve, reject) => {
    generateKeyPair('rsa', { modulusLength: 2048 }, (err, _publicKey, privateKey) => {
      if (err) reject(err);
      else resolve(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
    });
  });
  let source: AppTokenSource | undefined;
  return async () => {
    source ??= createAppTokenSource({
      applicationId: SIMULATED_APPLICATION_ID,
      privateKey: await simulatedKey!,
    });
    return source();
  };
}
