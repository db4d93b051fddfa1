// The REST subset of the local agent: the token grant, the think models listing, text
// intelligence and the batch speak endpoints (docs/protocols/agent.md;
// docs/protocols/speech-service.md sections 2 and 4 to 7). Every other path answers 404.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AGENT_PATH } from '../../agent/protocol.js';
import { type AuthPolicy, authorize } from './auth.js';
import { errorBody, sendJson } from './http-replies.js';
import { issueJwt } from './jwt.js';
import type { PhraseBook } from './phrases.js';
import { handleRead, READ_PATH } from './read.js';
import { handleSpeak, SPEAK_V1_PATH, SPEAK_V2_PATH } from './speak.js';
import { readBody } from './request-body.js';
import { THINK_MODELS } from './think-models.js';

export const GRANT_PATH = '/v1/auth/grant';
export const THINK_MODELS_PATH = '/v1/agent/settings/think/models';

/** Token lifetime when the grant body names none (docs/protocols/speech-service.md section 2). */
export const DEFAULT_GRANT_TTL_SECONDS = 30;
const MAX_GRANT_TTL_SECONDS = 3600;
const MAX_BODY_BYTES = 16 * 1024;

export async function handleRest(
  req: IncomingMessage,
  res: ServerResponse,
  auth: AuthPolicy,
  phrases: PhraseBook,
): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  if (path === READ_PATH) return handleRead(req, res, auth);
  if (path === SPEAK_V1_PATH) return handleSpeak('v1', req, res, auth, phrases);
  if (path === SPEAK_V2_PATH) return handleSpeak('v2', req, res, auth, phrases);
  if (path === GRANT_PATH) {
    if (req.method !== 'POST') return sendJson(res, 405, errorBody(405, 'use POST'));
    return grant(req, res, auth);
  }
  if (path === THINK_MODELS_PATH) {
    if (req.method !== 'GET') return sendJson(res, 405, errorBody(405, 'use GET'));
    const check = authorize(req.headers.authorization, auth);
    if (!check.ok) return sendJson(res, 401, errorBody(401, check.reason));
    return sendJson(res, 200, { models: THINK_MODELS });
  }
  if (path === AGENT_PATH) return sendJson(res, 426, errorBody(426, 'this path takes a WebSocket upgrade'));
  return sendJson(res, 404, errorBody(404, `no such endpoint: ${req.method} ${path}`));
}

/** POST /v1/auth/grant: an API key (not a JWT) buys a short-lived JWT. */
async function grant(req: IncomingMessage, res: ServerResponse, auth: AuthPolicy): Promise<void> {
  const check = authorize(req.headers.authorization, auth);
  if (!check.ok) return sendJson(res, 401, errorBody(401, check.reason));
  if (check.kind !== 'key') return sendJson(res, 401, errorBody(401, 'a token grant needs an API key'));

  const body = await readBody(req, MAX_BODY_BYTES);
  if (body === undefined) return sendJson(res, 413, errorBody(413, `body over ${MAX_BODY_BYTES} bytes`));
  let ttl = DEFAULT_GRANT_TTL_SECONDS;
  if (body.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return sendJson(res, 400, errorBody(400, 'body must be JSON'));
    }
    const requested = (parsed as { ttl_seconds?: unknown } | null)?.ttl_seconds;
    if (requested !== undefined) {
      if (
        !Number.isInteger(requested) ||
        (requested as number) < 1 ||
        (requested as number) > MAX_GRANT_TTL_SECONDS
      ) {
        return sendJson(
          res,
          400,
          errorBody(400, `ttl_seconds must be an integer from 1 to ${MAX_GRANT_TTL_SECONDS}`),
        );
      }
      ttl = requested as number;
    }
  }
  sendJson(res, 200, { access_token: issueJwt(auth.jwtSecret, ttl), expires_in: ttl });
}
