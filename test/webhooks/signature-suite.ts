// The signature cases every provider must pass (docs/protocols/webhook-providers.md sections 3 and 4), run from each
// provider's test file against a real app: valid, rotated secret, missing, malformed, wrong
// encoding, wrong secret, one byte altered, the raw bytes (not a re-serialization) verified, and an
// expired timestamp where the provider has one.
import { describe, expect, it } from 'vitest';
import { type FakeOperatorGateway, type GatewayApp, metricValue, useGatewayWithOperator } from './helpers.js';

export type Headers = Record<string, string>;

export interface ProviderCase {
  /** Test title, e.g. `inbox (rules webhook)`. */
  title: string;
  provider: string;
  /** Active secrets, in order; the suite signs with the first and with the second (rotation). */
  secrets: readonly string[];
  /** An accepted event's body, with unicode escapes and odd whitespace. */
  body: string;
  /** What that body is forwarded as, and its idempotency key. */
  forwardedName: string;
  idempotencyKey: string;
  /** Valid signature headers (plus whatever else the provider needs) for `body`. */
  sign(body: string, secret: string): Promise<Headers> | Headers;
  /** The headers of `sign` without the signature (the other headers kept). */
  unsigned(body: string): Headers;
  /** A correct digest in the wrong encoding (hex where base64 is due, or the reverse). */
  wrongEncoding(body: string, secret: string): Headers;
  /** A signature header that is no signature at all. */
  malformed(body: string): Headers;
  /** Valid signature over a timestamp outside the tolerance, where the provider has one. */
  expired?(body: string, secret: string): Headers;
  /** Whether a signature over the compact re-serialization is accepted (inbox rules only). */
  acceptsCompactJson?: boolean;
}

/** A JSON body whose bytes differ from any re-serialization of it. */
export function oddJson(fields: Record<string, unknown>): string {
  const entries = Object.entries(fields).map(([key, value]) => `\t"${key}" :  ${JSON.stringify(value)}`);
  return `{\r\n${entries.join(' ,\n')},\n  "note": "caf\\u00e9 \\ud83d\\ude80 \\/ é  ✓",\n"amount" : 1.50 }\n\n`;
}

export function compactOf(body: string): string {
  return JSON.stringify(JSON.parse(body));
}

/** Flips one bit of one byte in the middle of a value of the body, keeping it valid JSON. */
export function alterOneByte(body: string): string {
  const at = body.indexOf('caf');
  return `${body.slice(0, at)}cag${body.slice(at + 3)}`;
}

async function post(gw: GatewayApp, provider: string, body: string, headers: Headers) {
  return gw.app.inject({
    method: 'POST',
    url: `/webhooks/${provider}`,
    headers: { 'content-type': 'application/json', ...headers },
    payload: body,
  });
}

export function signatureSuite(c: ProviderCase): void {
  describe(`${c.title}: signatures`, () => {
    let gw: GatewayApp;
    let operator: FakeOperatorGateway;

    useGatewayWithOperator((g, o) => {
      gw = g;
      operator = o;
    });

    async function expectRejected(headers: Headers, status: number, code: string, body = c.body) {
      const res = await post(gw, c.provider, body, headers);
      expect(res.statusCode).toBe(status);
      expect(res.json()).toEqual({ error: { code, message: expect.any(String) } });
      expect(operator.requests).toHaveLength(0);
      return res;
    }

    it('forwards a validly signed event once, under <provider>/<event> with its idempotency key', async () => {
      const res = await post(gw, c.provider, c.body, await c.sign(c.body, c.secrets[0]!));
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ status: 'forwarded', event: c.forwardedName });
      expect(operator.requests).toHaveLength(1);
      const [forwarded] = operator.requests;
      expect(forwarded?.json.name).toBe(c.forwardedName);
      expect(forwarded?.headers['idempotency-key']).toBe(c.idempotencyKey);
      expect(forwarded?.json.payload).toEqual(JSON.parse(c.body));
      expect(
        await metricValue(gw.metrics, 'callbridge_webhook_requests_total', {
          provider: c.provider,
          outcome: 'forwarded',
        }),
      ).toBe(1);
    });

    it('accepts the second active secret (rotation)', async () => {
      const res = await post(gw, c.provider, c.body, await c.sign(c.body, c.secrets[1]!));
      expect(res.statusCode).toBe(200);
      expect(operator.requests).toHaveLength(1);
    });

    it('verifies the bytes as received, whatever the content type says', async () => {
      const headers = {
        ...(await c.sign(c.body, c.secrets[0]!)),
        'content-type': 'text/plain; charset=latin1',
      };
      const res = await post(gw, c.provider, c.body, headers);
      expect(res.statusCode).toBe(200);
    });

    it('rejects a request without a signature with 401', async () => {
      await expectRejected(c.unsigned(c.body), 401, 'CALLBRIDGE_UNAUTHORIZED');
      expect(
        await metricValue(gw.metrics, 'callbridge_webhook_auth_failures_total', {
          provider: c.provider,
          reason: 'missing',
        }),
      ).toBe(1);
    });

    it('rejects a malformed signature with 403', async () => {
      await expectRejected(c.malformed(c.body), 403, 'CALLBRIDGE_BAD_SIGNATURE');
    });

    it('rejects the right digest in the wrong encoding', async () => {
      await expectRejected(c.wrongEncoding(c.body, c.secrets[0]!), 403, 'CALLBRIDGE_BAD_SIGNATURE');
    });

    it('rejects a signature made with another secret', async () => {
      await expectRejected(await c.sign(c.body, 'not-the-secret'), 403, 'CALLBRIDGE_BAD_SIGNATURE');
      expect(
        await metricValue(gw.metrics, 'callbridge_webhook_requests_total', {
          provider: c.provider,
          outcome: 'bad_signature',
        }),
      ).toBe(1);
    });

    it('rejects a body altered by one byte after signing', async () => {
      const headers = await c.sign(c.body, c.secrets[0]!);
      await expectRejected(headers, 403, 'CALLBRIDGE_BAD_SIGNATURE', alterOneByte(c.body));
    });

    if (c.acceptsCompactJson) {
      it('falls back to the compact re-serialization of the body when the raw bytes do not match', async () => {
        const res = await post(gw, c.provider, c.body, await c.sign(compactOf(c.body), c.secrets[0]!));
        expect(res.statusCode).toBe(200);
      });
    } else {
      it('never verifies a re-serialization: a signature over the compact JSON is rejected', async () => {
        await expectRejected(await c.sign(compactOf(c.body), c.secrets[0]!), 403, 'CALLBRIDGE_BAD_SIGNATURE');
      });
    }

    const expired = c.expired;
    if (expired) {
      it('rejects a validly signed request whose timestamp is outside the tolerance', async () => {
        await expectRejected(expired(c.body, c.secrets[0]!), 403, 'CALLBRIDGE_BAD_SIGNATURE');
        expect(
          await metricValue(gw.metrics, 'callbridge_webhook_requests_total', {
            provider: c.provider,
            outcome: 'expired',
          }),
        ).toBe(1);
      });
    }
  });
}
