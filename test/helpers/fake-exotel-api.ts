// Exotel's REST API as a test double (EXOTEL_API_URL points here): answers as Exotel does by default.
import { randomBytes } from 'node:crypto';
import { type FakeApiResponder, type FakeCarrierApi, startFakeCarrierApi } from './fake-carrier-api.js';

/** POST …/Calls/connect.json: a new call, in progress. GET …/Calls/{sid}.json: that call, completed. */
export const exotelDefaults: FakeApiResponder = (req) => {
  if (req.method === 'POST' && req.path.endsWith('/Calls/connect.json')) {
    return { status: 200, body: { Call: { Sid: randomBytes(16).toString('hex'), Status: 'in-progress' } } };
  }
  const sid = /\/Calls\/([^/]+)\.json$/.exec(req.path)?.[1];
  if (req.method === 'GET' && sid !== undefined) {
    return { status: 200, body: { Call: { Sid: sid, Status: 'completed' } } };
  }
  return { status: 404, body: { RestException: { Status: 404, Message: 'Not Found', Code: 20404 } } };
};

export function startFakeExotelApi(responder: FakeApiResponder = exotelDefaults): Promise<FakeCarrierApi> {
  return startFakeCarrierApi(responder);
}
