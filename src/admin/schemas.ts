// The /v1 routes' schemas: each route takes its operation from the wire contract (src/api), adds
// its summary and the errors it may answer, and gets its request types from the TypeBox type
// provider. Bodies, path parameters and query strings are checked against them (validation.ts);
// /openapi.json is generated from them (openapi.ts).
import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { TSchema } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { CallRecord, Campaign, ErrorBody, LiveCall, OPERATIONS, type Operations } from '../api/index.js';

export const SESSION_COOKIE = 'callbridge_session';
/** Lower case: Node lower-cases incoming header names. */
export const CSRF_HEADER = 'x-callbridge-csrf';

/** The error answers every authenticated route may give (inline: no shared schema to resolve). */
export function errors(...statuses: number[]): Record<number, TSchema> {
  const { $id: _id, ...inline } = ErrorBody;
  const all = [400, 401, 403, ...statuses];
  return Object.fromEntries(all.map((status) => [status, inline as TSchema]));
}

type Operation<P extends keyof Operations, M extends keyof Operations[P]> = Omit<
  Operations[P][M],
  'feed' | 'response'
>;

/**
 * The schema of the route serving `method path` of the contract, as Fastify takes it: the
 * operation's params, query string and body, its answers and the errors of `errorStatuses`.
 */
export function routeSchema<P extends keyof Operations, M extends keyof Operations[P] & string>(
  path: P,
  method: M,
  summary: string,
  ...errorStatuses: number[]
): Operation<P, M> & { summary: string; response: Record<number, unknown> } {
  const {
    feed: _feed,
    response,
    ...request
  } = OPERATIONS[path][method] as {
    feed?: unknown;
    response: Record<number, unknown>;
  };
  return { summary, ...request, response: { ...response, ...errors(...errorStatuses) } } as Operation<
    P,
    M
  > & {
    summary: string;
    response: Record<number, unknown>;
  };
}

/** The scope, its routes typed from their schemas. */
export const typed = (scope: FastifyInstance) => scope.withTypeProvider<TypeBoxTypeProvider>();

/** Shared schemas referenced by `$ref`, added to the app once (openapi.ts). */
export const SHARED_SCHEMAS: readonly TSchema[] = [LiveCall, CallRecord, Campaign];
