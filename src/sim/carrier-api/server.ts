// The built-in simulated carrier API: a small HTTP server on a loopback ephemeral port that
// answers the REST requests callbridge makes of a carrier, in that carrier's own paths and shapes
// (one file per carrier under carriers/), so calls can be answered, hung up and transferred with no
// carrier account. `GET /sim/calls/:callSid` tells the simulated phone what the API was asked for
// its call (for Telnyx: the answer's `stream_url`, where the media stream is to be opened).
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SimCallLog, type SimCallRecord } from './call-log.js';
import type { PlacedSimCall, SimApiReply, SimApiRequest, SimApiRoute, SimCarrierApi } from './handler.js';
import { SIM_CARRIER_APIS } from './registry.js';

export interface SimulatedCarrierApiOptions {
  /** Default 127.0.0.1: the API holds no secrets but should not be reachable from elsewhere. */
  host?: string;
  /** Default 0: an ephemeral port. */
  port?: number;
  /** Default: every carrier in the registry. */
  carriers?: readonly SimCarrierApi[];
  now?: () => number;
  /** Who answers the outbound calls the API accepts (src/sim/callee/); default: nobody, they just ring. */
  onPlaced?: (call: PlacedSimCall, calls: SimCallLog) => void;
  /** Every request, before it is answered: tests count what a fleet asked of its one carrier. */
  onRequest?: (request: { method: string; path: string }) => void;
}

export interface SimulatedCarrierApi {
  /** Base URL, no trailing slash: what a carrier's API URL is set to. */
  url: string;
  calls: SimCallLog;
  close(): Promise<void>;
}

const BODY_LIMIT_BYTES = 64 * 1024;
/** Longest a `GET /sim/calls/:callSid?wait=…` is held open. */
const MAX_WAIT_MS = 30_000;
const LIST_LIMIT = 100;
/** Waits held open at once; past this a wait is refused rather than queued. */
const MAX_WAITS = 1000;

interface CompiledRoute {
  api: SimCarrierApi;
  route: SimApiRoute;
  pattern: RegExp;
  names: string[];
}

function compile(api: SimCarrierApi, route: SimApiRoute): CompiledRoute {
  const names: string[] = [];
  const source = route.path
    .split('/')
    .map((segment) => {
      if (!segment.startsWith(':')) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(segment.slice(1));
      return '([^/]+)';
    })
    .join('/');
  return { api, route, pattern: new RegExp(`^${source}$`), names };
}

function readBody(req: IncomingMessage, raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  const text = raw.toString('utf8');
  const type = req.headers['content-type'] ?? '';
  if (type.includes('application/x-www-form-urlencoded'))
    return Object.fromEntries(new URLSearchParams(text));
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function send(res: ServerResponse, reply: SimApiReply): void {
  if (reply.body === undefined) {
    res.writeHead(reply.status);
    res.end();
    return;
  }
  res.writeHead(reply.status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(reply.body));
}

function ourError(status: number, code: string, message: string): SimApiReply {
  return { status, body: { error: { code, message } } };
}

/**
 * What `wait=` waits for: the call answered (or where to stream known), its stream asked for (an
 * outbound call, answered already, whose stream starts later), something spoken, the call ended.
 */
function readiness(wait: string): ((call: SimCallRecord) => boolean) | undefined {
  if (wait === 'answer') return (call) => call.streamUrl !== undefined || call.state !== 'ringing';
  if (wait === 'stream')
    return (call) => call.streamUrl !== undefined || call.spoken.length > 0 || call.state === 'ended';
  if (wait === 'speak') return (call) => call.spoken.length > 0 || call.state === 'ended';
  if (wait === 'end') return (call) => call.state === 'ended';
  return undefined;
}

export async function startSimulatedCarrierApi(
  opts: SimulatedCarrierApiOptions = {},
): Promise<SimulatedCarrierApi> {
  const calls = new SimCallLog(opts.now);
  const routes = (opts.carriers ?? SIM_CARRIER_APIS).flatMap((api) =>
    api.routes.map((route) => compile(api, route)),
  );
  const context = {
    calls,
    newId: () => randomUUID(),
    placed: (call: PlacedSimCall) => opts.onPlaced?.(call, calls),
  };
  let closing = false;
  let waiting = 0;

  async function simCall(url: URL): Promise<SimApiReply> {
    const callSid = decodeURIComponent(url.pathname.slice('/sim/calls/'.length));
    const wait = url.searchParams.get('wait');
    let call = calls.get(callSid);
    if (wait !== null) {
      const ready = readiness(wait);
      if (ready === undefined)
        return ourError(400, 'CALLBRIDGE_BAD_REQUEST', 'wait must be answer, stream, speak or end');
      const requested = Number(url.searchParams.get('timeoutMs') ?? '10000');
      const timeoutMs = Number.isFinite(requested) ? Math.min(Math.max(requested, 0), MAX_WAIT_MS) : 10_000;
      if (waiting >= MAX_WAITS) return ourError(503, 'CALLBRIDGE_UNAVAILABLE', 'too many waits at once');
      if (!closing) {
        waiting += 1;
        call = await calls.waitFor(callSid, ready, timeoutMs).finally(() => {
          waiting -= 1;
        });
      }
    }
    if (call === undefined)
      return ourError(404, 'CALLBRIDGE_NOT_FOUND', 'the API was asked nothing about this call');
    return { status: 200, body: call };
  }

  function carrierRequest(req: IncomingMessage, url: URL, body: unknown): SimApiReply {
    let methodMismatch = false;
    for (const compiled of routes) {
      const match = compiled.pattern.exec(url.pathname);
      if (match === null) continue;
      if (compiled.route.method !== req.method) {
        methodMismatch = true;
        continue;
      }
      const params: Record<string, string> = Object.create(null);
      compiled.names.forEach((name, i) => {
        params[name] = decodeURIComponent(match[i + 1]!);
      });
      const request: SimApiRequest = {
        method: req.method,
        path: url.pathname,
        query: url.searchParams,
        params,
        headers: req.headers,
        body,
      };
      return compiled.api.authenticate(request) ?? compiled.route.handle(request, context);
    }
    return methodMismatch
      ? ourError(405, 'CALLBRIDGE_METHOD_NOT_ALLOWED', 'method not allowed')
      : ourError(404, 'CALLBRIDGE_NOT_FOUND', 'no simulated carrier route for this path');
  }

  async function handle(req: IncomingMessage, raw: Buffer): Promise<SimApiReply> {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://sim.invalid');
      decodeURIComponent(url.pathname);
    } catch {
      return ourError(400, 'CALLBRIDGE_BAD_REQUEST', 'malformed request path');
    }
    opts.onRequest?.({ method: req.method ?? 'GET', path: url.pathname });
    if (req.method === 'GET' && url.pathname === '/sim/calls') {
      // The list shows calls, never what opens them: no stream URL (its token), no request bodies
      // (webhook URLs, client state). A call's own record is for whoever already knows its id.
      return {
        status: 200,
        body: {
          calls: calls
            .list(LIST_LIMIT)
            .map(({ carrier, callSid, createdAtMs, state, status, durationS }) => ({
              carrier,
              callSid,
              createdAtMs,
              state,
              ...(status === undefined ? {} : { status }),
              ...(durationS === undefined ? {} : { durationS }),
            })),
        },
      };
    }
    if (req.method === 'GET' && url.pathname.startsWith('/sim/calls/')) return simCall(url);
    return carrierRequest(req, url, readBody(req, raw));
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT_BYTES) {
        if (!refused) send(res, ourError(413, 'CALLBRIDGE_BODY_TOO_LARGE', 'request body too large'));
        refused = true;
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (refused) return;
      handle(req, Buffer.concat(chunks)).then(
        (reply) => send(res, reply),
        () => send(res, ourError(500, 'CALLBRIDGE_INTERNAL', 'internal error')),
      );
    });
  });
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        calls.endWaits();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
