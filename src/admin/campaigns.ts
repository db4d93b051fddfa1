// Campaigns, for operators and the CLI. Mounted by the app inside the `/v1` admin scope, which
// checks each route's declared role: viewers read, operators change (audited).
//   POST /campaigns                          → 201 the campaign (draft)
//   GET  /campaigns[?limit=&cursor=]         → 200 {"campaigns": [...], "nextCursor": …}, newest first
//   GET  /campaigns/:id                      → 200 the campaign with its progress
//   POST /campaigns/:id/contacts             → 200 {"added": n, "rejected": [{"row", "reason"}]}
//        text/csv (a header row, then one contact per row) or a JSON array of objects
//   POST /campaigns/:id/start|pause|resume|cancel → 200 the campaign; 409 from a state that forbids it
//   GET  /campaigns/:id/contacts[?state=&limit=&cursor=] → 200 {"contacts": [...], "nextCursor": …}
//   GET  /campaigns/:id/results.csv          → 200 text/csv, one row per contact
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BadRequestError } from '../errors.js';
import { CONTACT_STATES, type ContactState } from '../store/campaign-records.js';
import { type CampaignAction, type CampaignService, contactsBody } from '../outbound/service.js';
import {
  CampaignBody,
  CampaignPage,
  ContactPage,
  ContactsAdded,
  ContactsQuery,
  ContactsUpload,
  CsvText,
  errors,
  IdParams,
  PageQuery,
} from './schemas.js';
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

  scope.post(
    '/campaigns',
    {
      config: { role: 'operator' },
      schema: {
        summary: 'Create a campaign (draft)',
        body: CampaignBody,
        response: { 201: Type.Ref('Campaign'), ...errors() },
      },
    },
    async (request, reply) => {
      const campaign = await campaigns.create(request.body);
      await request.audit('campaign.create', campaign.id, { name: campaign.name });
      return reply.code(201).send(campaign);
    },
  );

  const byId = { params: IdParams };
  scope.get<{ Querystring: RawQuery }>(
    '/campaigns',
    {
      config: { role: 'viewer' },
      schema: {
        summary: 'Campaigns, newest first',
        querystring: PageQuery,
        response: { 200: CampaignPage, ...errors() },
      },
    },
    async (request) => {
      knownParams(request.query, ['limit', 'cursor']);
      const cursor = cursorParam(request.query);
      return campaigns.list({ limit: limitParam(request.query, 20, 100), ...(cursor ? { cursor } : {}) });
    },
  );

  scope.get<{ Params: { id: string } }>(
    '/campaigns/:id',
    {
      config: { role: 'viewer' },
      schema: {
        summary: 'A campaign with its progress',
        ...byId,
        response: { 200: Type.Ref('Campaign'), ...errors(404) },
      },
    },
    async (request) => campaigns.get(request.params.id),
  );

  scope.post<{ Params: { id: string } }>(
    '/campaigns/:id/contacts',
    {
      bodyLimit: UPLOAD_BODY_LIMIT_BYTES,
      preHandler: allowLongProcessing,
      config: { role: 'operator' },
      schema: {
        summary: 'Upload contacts: text/csv or a JSON array',
        ...byId,
        body: ContactsUpload,
        response: { 200: ContactsAdded, ...errors(404, 409, 413) },
      },
    },
    async (request) => {
      const added = await campaigns.addContacts(
        request.params.id,
        contactsBody(request.headers['content-type'], request.body),
      );
      await request.audit('campaign.contacts', request.params.id, {
        added: added.added,
        rejected: added.rejected.length,
      });
      return added;
    },
  );

  for (const action of ACTIONS) {
    scope.post<{ Params: { id: string } }>(
      `/campaigns/:id/${action}`,
      {
        config: { role: 'operator' },
        schema: {
          summary: `${action[0]!.toUpperCase()}${action.slice(1)} the campaign`,
          ...byId,
          response: { 200: Type.Ref('Campaign'), ...errors(404, 409) },
        },
      },
      async (request) => {
        const campaign = await campaigns.act(request.params.id, action);
        await request.audit(`campaign.${action}`, request.params.id);
        return campaign;
      },
    );
  }

  scope.get<{ Params: { id: string }; Querystring: RawQuery }>(
    '/campaigns/:id/contacts',
    {
      config: { role: 'viewer' },
      schema: {
        summary: "A campaign's contacts",
        ...byId,
        querystring: ContactsQuery,
        response: { 200: ContactPage, ...errors(404) },
      },
    },
    async (request) => {
      knownParams(request.query, ['state', 'limit', 'cursor']);
      const state = stateParam(request.query);
      const cursor = cursorParam(request.query);
      return campaigns.contacts(request.params.id, {
        limit: limitParam(request.query, 50, 200),
        ...(state ? { state } : {}),
        ...(cursor ? { cursor } : {}),
      });
    },
  );

  scope.get<{ Params: { id: string } }>(
    '/campaigns/:id/results.csv',
    {
      config: { role: 'viewer' },
      schema: {
        summary: 'The results, one row per contact',
        ...byId,
        produces: ['text/csv'],
        response: { 200: { ...CsvText, content: { 'text/csv': { schema: CsvText } } }, ...errors(404) },
      },
    },
    async (request, reply) => {
      const csv = await campaigns.results(request.params.id);
      await request.audit('campaign.results', request.params.id);
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="results-${request.params.id}.csv"`)
        .send(csv);
    },
  );
}
