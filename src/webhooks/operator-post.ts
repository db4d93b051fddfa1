// One POST to the operator gateway over a kept-alive connection (node:http or node:https): a
// fraction of what `fetch` costs per request (no web streams, no abort-signal machinery, no new
// connection per burst), which counts at the rates providers deliver in. Resolves with the status
// once the answer has been read (its body is not needed); rejects when no answer arrived in time.
// A redirect is followed as `fetch` follows it, by `fetch` itself: rare, and kept as it was.
import { Agent as HttpAgent, type IncomingMessage, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Idle connections kept per origin: enough for a burst, few enough to leave the gateway alone after. */
const MAX_FREE_SOCKETS = 16;

const httpAgent = new HttpAgent({ keepAlive: true, maxFreeSockets: MAX_FREE_SOCKETS });
const httpsAgent = new HttpsAgent({ keepAlive: true, maxFreeSockets: MAX_FREE_SOCKETS });

export async function postToOperator(
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<number> {
  const status = await post(new URL(url), headers, body, timeoutMs);
  if (!REDIRECTS.has(status)) return status;
  const response = await fetch(url, {
    method: 'POST',
    headers,
    body,
    signal: AbortSignal.timeout(timeoutMs),
  });
  await response.arrayBuffer().catch(() => undefined);
  return response.status;
}

function post(url: URL, headers: Record<string, string>, body: string, timeoutMs: number): Promise<number> {
  const https = url.protocol === 'https:';
  const send = https ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    let status: number | null = null;
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    const settle = () => {
      clearTimeout(timer);
      if (status === null) return;
      resolve(status);
    };
    const req = send(
      url,
      {
        method: 'POST',
        agent: https ? httpsAgent : httpAgent,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      },
      (res: IncomingMessage) => {
        status = res.statusCode ?? 0;
        res.resume();
        res.on('end', settle);
        // The status arrived; a body cut short does not change it.
        res.on('error', settle);
        res.on('close', settle);
      },
    );
    req.on('error', (err) => {
      clearTimeout(timer);
      if (status === null) reject(err);
      else resolve(status);
    });
    req.end(body);
  });
}
