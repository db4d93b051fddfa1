import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createTwilioRest } from '../../../src/carriers/twilio/rest.js';
import { CarrierApiError } from '../../../src/errors.js';
import { dialTwiml } from '../../../src/carriers/twilio/twiml.js';

const ACCOUNT_SID = 'AC0123456789abcdef0123456789abcdef';
const AUTH_TOKEN = 'super-secret-auth-token-0123456789';
const CALL_SID = 'CA5ef8732a3c49700934481addd5ce1659';

interface RecordedRequest {
  method: string | undefined;
  path: string | undefined;
  authorization: string | undefined;
  contentType: string | undefined;
  form: URLSearchParams;
}

type Responder = (req: IncomingMessage, res: ServerResponse) => void;

const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

async function startApi(
  respond: Responder = (_req, res) => res.end('{}'),
): Promise<{ url: string; requests: RecordedRequest[] }> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({
        method: req.method,
        path: req.url,
        authorization: req.headers.authorization,
        contentType: req.headers['content-type'],
        form: new URLSearchParams(Buffer.concat(chunks).toString('utf8')),
      });
      respond(req, res);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests };
}

function json(status: number, body: unknown): Responder {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
}

function client(apiUrl: string, timeoutMs = 2000) {
  return createTwilioRest({ apiUrl, accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, timeoutMs });
}

async function rejection(promise: Promise<unknown>): Promise<CarrierApiError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(CarrierApiError);
    return err as CarrierApiError;
  }
  throw new Error('expected the call to fail');
}

const BASIC = `Basic ${Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString('base64')}`;
const CALL_PATH = `/2010-04-01/Accounts/${ACCOUNT_SID}/Calls/${CALL_SID}.json`;

describe('twilio REST client', () => {
  it('hangs up with Status=completed, form-encoded, with Basic auth', async () => {
    const api = await startApi();
    await client(api.url).hangup(CALL_SID);
    expect(api.requests).toHaveLength(1);
    const [request] = api.requests;
    expect(request).toMatchObject({ method: 'POST', path: CALL_PATH, authorization: BASIC });
    expect(request?.contentType).toMatch(/^application\/x-www-form-urlencoded/);
    expect([...(request?.form ?? [])]).toEqual([['Status', 'completed']]);
  });

  it('updates a call with the given fields', async () => {
    const api = await startApi();
    await client(`${api.url}/`).update(CALL_SID, { Url: 'https://h.example/next?a=1&b=2', Method: 'POST' });
    expect(api.requests[0]?.path).toBe(CALL_PATH);
    expect([...(api.requests[0]?.form ?? [])]).toEqual([
      ['Url', 'https://h.example/next?a=1&b=2'],
      ['Method', 'POST'],
    ]);
  });

  it('transfers with Dial TwiML', async () => {
    const api = await startApi();
    await client(api.url).transfer(CALL_SID, '+15551234567');
    expect(api.requests[0]?.path).toBe(CALL_PATH);
    expect(api.requests[0]?.form.get('Twiml')).toBe(dialTwiml('+15551234567'));
  });

  it('refuses an invalid transfer target before any request', async () => {
    const api = await startApi();
    await expect(client(api.url).transfer(CALL_SID, 'not-a-number')).rejects.toThrow(/E\.164/);
    expect(api.requests).toHaveLength(0);
  });

  it('creates a call with repeated fields and returns sid and status', async () => {
    const api = await startApi(json(201, { sid: 'CAnew', status: 'queued', to: '+15551234567' }));
    const result = await client(api.url).createCall({
      To: '+15551234567',
      From: '+15557654321',
      Twiml: '<Response><Hangup/></Response>',
      StatusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
    });
    expect(result).toEqual({ sid: 'CAnew', status: 'queued' });
    const [request] = api.requests;
    expect(request).toMatchObject({
      method: 'POST',
      path: `/2010-04-01/Accounts/${ACCOUNT_SID}/Calls.json`,
      authorization: BASIC,
    });
    expect(request?.form.getAll('StatusCallbackEvent')).toEqual([
      'initiated',
      'ringing',
      'answered',
      'completed',
    ]);
    expect(request?.form.get('Twiml')).toBe('<Response><Hangup/></Response>');
  });

  it('fails create without retry when the response lacks a sid', async () => {
    const api = await startApi(json(201, { status: 'queued' }));
    const err = await rejection(client(api.url).createCall({ To: '+15551234567' }));
    expect(err).toMatchObject({ code: 'CALLBRIDGE_CARRIER_API', retryable: false });
  });

  it('encodes the call sid into the path', async () => {
    const api = await startApi();
    await client(api.url).hangup('../x?y');
    expect(api.requests[0]?.path).toBe(`/2010-04-01/Accounts/${ACCOUNT_SID}/Calls/..%2Fx%3Fy.json`);
  });

  it.each([
    [500, true],
    [503, true],
    [429, true],
    [400, false],
    [401, false],
    [404, false],
  ])('maps HTTP %i to a carrier API error with retryable=%s', async (status, retryable) => {
    const api = await startApi(
      json(status, { code: 20404, message: `The requested resource ${CALL_SID} was not found`, status }),
    );
    const err = await rejection(client(api.url).hangup(CALL_SID));
    expect(err).toMatchObject({
      code: 'CALLBRIDGE_CARRIER_API',
      retryable,
      status,
      carrierCode: 20404,
      carrier: 'twilio',
    });
    expect(err.message).toContain(String(status));
    expect(err.message).not.toContain(AUTH_TOKEN);
    expect(err.message).not.toContain(Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString('base64'));
  });

  it('handles an error response that is not JSON', async () => {
    const api = await startApi((_req, res) => {
      res.writeHead(502);
      res.end('<html>bad gateway</html>');
    });
    const err = await rejection(client(api.url).update(CALL_SID, { Status: 'completed' }));
    expect(err).toMatchObject({ retryable: true, status: 502, carrierCode: undefined });
  });

  it('times out a request that never gets an answer, as retryable', async () => {
    const api = await startApi(() => {
      // Never answers.
    });
    const started = Date.now();
    const err = await rejection(client(api.url, 150).hangup(CALL_SID));
    expect(Date.now() - started).toBeLessThan(1500);
    expect(err).toMatchObject({ code: 'CALLBRIDGE_CARRIER_API', retryable: true, status: undefined });
    expect(err.message).toMatch(/timed out after 150 ms/);
  });

  it('times out a response body that never ends', async () => {
    const api = await startApi((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"sid":');
    });
    const err = await rejection(client(api.url, 150).createCall({ To: '+15551234567' }));
    expect(err).toMatchObject({ retryable: true, status: undefined });
  });

  it('reports a refused connection as a retryable network error', async () => {
    const api = await startApi();
    const server = servers.pop()!;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const err = await rejection(client(api.url).hangup(CALL_SID));
    expect(err).toMatchObject({ code: 'CALLBRIDGE_CARRIER_API', retryable: true, status: undefined });
    expect(err.message).toMatch(/network error/);
    expect(err.message).not.toContain(AUTH_TOKEN);
  });
});
