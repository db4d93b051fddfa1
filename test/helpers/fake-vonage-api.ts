// Vonage's Voice API as a test double (VONAGE_API_URL points here): answers as Vonage does by
// default, and verifies nothing, so tests read the recorded application JWT themselves.
import { randomUUID } from 'node:crypto';
import { type FakeApiResponder, type FakeCarrierApi, startFakeCarrierApi } from './fake-carrier-api.js';

/** PUT on a call: 204. POST /v1/calls: 201 with a fresh uuid. GET a call: 200, answered. */
export const vonageDefaults: FakeApiResponder = (req) => {
  if (req.method === 'PUT') return { status: 204 };
  if (req.method === 'POST' && req.path === '/v1/calls') {
    return {
      status: 201,
      body: {
        uuid: randomUUID(),
        status: 'started',
        direction: 'outbound',
        conversation_uuid: `CON-${randomUUID()}`,
      },
    };
  }
  if (req.method === 'GET') {
    const uuid = req.path.split('/').pop() ?? '';
    return { status: 200, body: { uuid, status: 'answered', direction: 'outbound' } };
  }
  return {
    status: 404,
    body: { type: 'https://developer.nexmo.com/api-errors#not-found', title: 'Not Found' },
  };
};

export function startFakeVonageApi(responder: FakeApiResponder = vonageDefaults): Promise<FakeCarrierApi> {
  return startFakeCarrierApi(responder);
}
