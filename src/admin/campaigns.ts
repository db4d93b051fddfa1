// Campaigns, for operators and the CLI. Mounted by the app inside the `/v1` admin scope, which
// already checks ADMIN_TOKEN.
//   POST /campaigns                          → 201 the campaign (draft)
//   GET  /campaigns[?limit=&cursor=]         → 200 {"campaigns": [...], "nextCursor": …}, newest first
//   GET  /campaigns/:id                      → 200 the campaign with its progress
//   POST /campaigns/:id/contacts             → 200 {"added": n, "rejected": [{"row", "reason"}]}
//        text/csv (a header row, then one contact per row) or a JSON array of objects
//   POST /campaigns/:id/start|pause|resume|cancel → 200 the campaign; 409 from a state that forbids it
//   GET  /campaigns/:id/contacts[?state=&limit=&cursor=] → 200 {"contacts": [...], "nextCursor": …}
//   GET  /campaigns/:id/results.csv          → 200 text/csv, one row per contact
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BadRequestError } from '../errors.js';
import { CONTACT_STATES, type ContactState } from '../store/campaign-records.js';
import { type CampaignAction, type CampaignService, contactsBody } from '../outbound/service.js';
import { cursorParam, knownParams, limitParam, type RawQuery, single } from './query-params.js';

export interface CampaignAdminDeps {
  campaigns: CampaignService;
}

/** A contacts upload of the largest size accepted (50,000 rows) fits with room to spare. */
export const UPLOAD_BODY_LIMIT_BYTES = 16 * 1024 * 1024;
/**
 * How long an upload received whole may take to be read and stored, the connection silent meanwhile:
 * it is read in slices that let calls go on (src/outbound/slices.ts), so on a busy machine it may
 * outlast the server's 10 s idle limit, which guards against clients that send nothing.
 */
export const UPLOAD_PROCESSING_TIMEOUT_MS = 120_000;

/** A preHandler: runs once the body is in and the caller authenticated, so only real uploads get it. */
export function allowLongProcessing(request: FastifyRequest, _reply: unknown, done: () => void): void {
  request.raw.socket.setTimeout(UPLOAD_PROCESSING_TIMEOUT_MS);
  done();
}

const ACTIONS: readonly CampaignAction[] = ['start', 'pause', 'resume', 'cancel'];

/** text/csv bodies arrive as text; registered once per scope, whichever route file comes first. */
export function acceptCsv(scope: FastifyInstance): void {
  if (scope.hasContentTypeParser('text/csv')) return;
  scope.addContentTypeParser('text/csv', { parseAs: 'string' }, (_req, body, done) => done(null, body));
}

function stateParam(query: RawQuery): ContactState | undefined {
  const raw = single(query, 'state');
  if (raw === undefined) return undefined;
  if (!(CONTACT_STATES as readonly string[]).includes(raw)) {
    throw new BadRequestError(`state must be one of ${CONTACT_STATES.join(', ')}`);
  }
  return raw as ContactState;
}

export function registerCampaignAdminRoutes(scope: FastifyInstance, deps: CampaignAdminDeps): void {
  const { campaigns } = deps;
  acceptCsv(scope);

  scope.post('/campaigns', async (request, reply) =>
    reply.code(201).send(await campaigns.create(request.body)),
  );

  scope.get<{ Querystring: RawQuery }>('/campaigns', async (request) => {
    knownParams(request.query, ['limit', 'cursor']);
    const cursor = cursorParam(request.query);
    return campaigns.list({ limit: limitParam(request.query, 20, 100), ...(cursor ? { cursor } : {}) });
  });

  scope.get<{ Params: { id: string } }>('/campaigns/:id', async (request) =>
    campaigns.get(request.params.id),
  );

  scope.post<{ Params: { id: string } }>(
    '/campaigns/:id/contacts',
    { bodyLimit: UPLOAD_BODY_LIMIT_BYTES, preHandler: allowLongProcessing },
    async (request) =>
      campaigns.addContacts(request.params.id, contactsBody(request.headers['content-type'], request.body)),
  );

  for (const action of ACTIONS) {
    scope.post<{ Params: { id: string } }>(`/campaigns/:id/${action}`, async (request) =>
      campaigns.act(request.params.id, action),
    );
  }

  scope.get<{ Params: { id: string }; Querystring: RawQuery }>('/campaigns/:id/contacts', async (request) => {
    knownParams(request.query, ['state', 'limit', 'cursor']);
    const state = stateParam(request.query);
    const cursor = cursorParam(request.query);
    return campaigns.contacts(request.params.id, {
      limit: limitParam(request.query, 50, 200),
      ...(state ? { state } : {}),
      ...(cursor ? { cursor } : {}),
    });
  });

  scope.get<{ Params: { id: string } }>('/campaigns/:id/results.csv', async (request, reply) => {
    const csv = await campaigns.results(request.params.id);
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="results-${request.params.id}.csv"`)
      .send(csv);
  });
}
