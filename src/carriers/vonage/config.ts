// The Vonage variables (docs/protocols/vonage.md): the application and its private key sign REST
// requests, the signature secret verifies signed webhooks. Each bad value is a one-line error.
import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type Env, envError, envList, envString, envUrl } from '../../config/env.js';
import { BASE_URL } from '../../config/urls.js';

/** Vonage (docs/protocols/vonage.md): REST needs the application and its key, webhooks the secret. */
export interface VonageConfig {
  applicationId: string | null;
  /** The application's RSA private key, PEM text (read from the file when a path was given). */
  privateKey: string | null;
  /** Signature secrets that verify signed webhooks; several during rotation. Empty: not verified. */
  signatureSecrets: string[];
  apiKey: string | null;
  apiUrl: string;
}

declare module '../../config/types.js' {
  interface CarrierConfigs {
    vonage: VonageConfig;
  }
}

const APPLICATION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const API_KEY = /^[A-Za-z0-9]{1,32}$/;
const PEM_BEGIN = '-----BEGIN';

export function readVonage(env: Env, nodeEnv: string, cwd: string): VonageConfig {
  const applicationId = envString(env, 'VONAGE_APPLICATION_ID') ?? null;
  if (applicationId !== null && !APPLICATION_ID.test(applicationId)) {
    throw envError('VONAGE_APPLICATION_ID', 'must be a UUID', applicationId);
  }
  const privateKey = readPrivateKey(env, cwd);
  if (privateKey !== null && applicationId === null) {
    throw envError('VONAGE_APPLICATION_ID', 'required when VONAGE_PRIVATE_KEY is set');
  }
  const apiKey = envString(env, 'VONAGE_API_KEY') ?? null;
  if (apiKey !== null && !API_KEY.test(apiKey)) {
    throw envError('VONAGE_API_KEY', 'must be 1 to 32 letters and digits', apiKey);
  }
  const signatureSecrets = envList(env, 'VONAGE_SIGNATURE_SECRET');
  const configured = applicationId !== null || privateKey !== null || apiKey !== null;
  if (nodeEnv === 'production' && configured && signatureSecrets.length === 0) {
    throw envError(
      'VONAGE_SIGNATURE_SECRET',
      'required when NODE_ENV=production and Vonage is configured, so its webhooks are verified',
    );
  }
  const apiUrl = envUrl(env, 'VONAGE_API_URL', BASE_URL(['http', 'https'])) ?? 'https://api.nexmo.com';
  return { applicationId, privateKey, signatureSecrets, apiKey, apiUrl };
}

/**
 * PEM text as is (with `\n` escapes turned into newlines, as one-line env files write it), or else
 * a path to the key file. Either way it must hold an RSA private key. The value never appears in
 * a message: a mistyped path may be key material.
 */
function readPrivateKey(env: Env, cwd: string): string | null {
  const raw = envString(env, 'VONAGE_PRIVATE_KEY');
  if (raw === undefined) return null;
  let pem: string;
  if (raw.startsWith(PEM_BEGIN)) {
    pem = raw.replace(/\\n/g, '\n');
  } else {
    try {
      pem = readFileSync(resolve(cwd, raw), 'utf8');
    } catch {
      throw envError('VONAGE_PRIVATE_KEY', 'is neither PEM text nor the path of a readable file');
    }
  }
  let type: string | undefined;
  try {
    type = createPrivateKey(pem).asymmetricKeyType;
  } catch {
    type = undefined;
  }
  if (type !== 'rsa') throw envError('VONAGE_PRIVATE_KEY', 'must hold an RSA private key in PEM');
  return pem;
}
