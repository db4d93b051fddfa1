// The fetch policy (docs/security.md, "Dial and fetch policies"): a URL an API caller supplies (a
// voicemail's `audioUrl`, anything later) is fetched only from public addresses, unless its host is
// in FETCH_ALLOWED_HOSTS. The address is checked after DNS resolution, inside the connection's own
// `lookup`, so the socket goes to the very address that was checked (no window for DNS rebinding);
// literal addresses are checked before any socket is opened; redirects are followed by hand, each
// hop checked the same way. What a caller is told names the rule, never what the remote answered,
// so a refused or failed fetch cannot be used to map a private network.
import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { FetchPolicyConfig } from '../config/trust-policies.js';

/** A resolved address, as `dns.lookup` gives it with `all: true`. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to every address it has (dns.lookup by default; tests script it). */
export type Resolve = (hostname: string) => Promise<ResolvedAddress[]>;

/**
 * A fetch the policy refused, or that failed: `message` ("refused by the fetch policy: …", "failed: …",
 * "timed out") is safe to show to the caller and reads after "fetching the <thing> ".
 */
export class FetchProblem extends Error {
  readonly code: 'CALLBRIDGE_FETCH_REFUSED' | 'CALLBRIDGE_FETCH_FAILED';
  constructor(message: string, refused: boolean) {
    super(message);
    this.name = 'FetchProblem';
    this.code = refused ? 'CALLBRIDGE_FETCH_REFUSED' : 'CALLBRIDGE_FETCH_FAILED';
  }
}

export interface FetchOptions {
  /** The whole fetch, redirects, headers and body. */
  timeoutMs: number;
  maxBytes: number;
  /** Redirects followed, each checked like the first URL; 0: none. */
  maxRedirects?: number;
  headers?: Record<string, string>;
}

const DEFAULT_MAX_REDIRECTS = 3;
const RULE = 'refused by the fetch policy';
/** IPv6 global unicast (RFC 4291 section 2.4): everything else is special, mapped or reserved. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

const refused = (why: string) =>
  new FetchProblem(`${RULE}: ${why} (only public addresses, or hosts in FETCH_ALLOWED_HOSTS)`, true);

/**
 * Whether `address` is on the public Internet: IPv4 unicast outside every private, loopback,
 * link-local, shared (100.64/10), unspecified (0/8), reserved and multicast range; IPv6 global
 * unicast outside the ranges that embed or translate an IPv4 address. IPv4-mapped IPv6 is judged
 * as the IPv4 address it maps.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address) || isIP(address) === 0) return false;
  const parsed = ipaddr.process(address);
  if (parsed.range() !== 'unicast') return false;
  return parsed.kind() === 'ipv4' || parsed.match(GLOBAL_UNICAST_V6);
}

export class FetchPolicy {
  readonly #hosts: ReadonlySet<string>;
  readonly #networks: ReadonlyArray<[ipaddr.IPv4 | ipaddr.IPv6, number]>;
  readonly #resolve: Resolve;

  constructor(config: FetchPolicyConfig = { allowedHosts: [], allowedCidrs: [] }, resolve?: Resolve) {
    this.#hosts = new Set(config.allowedHosts);
    this.#networks = config.allowedCidrs.map((cidr) => ipaddr.parseCIDR(cidr));
    this.#resolve = resolve ?? ((hostname) => dnsLookup(hostname, { all: true, verbatim: true }));
  }

  /** Whether a connection to `address` for `hostname` is allowed. */
  allows(hostname: string, address: string): boolean {
    if (this.#hosts.has(hostname)) return true;
    if (isIP(address) === 0) return false;
    const parsed = ipaddr.process(address);
    const inNetwork = this.#networks.some(
      ([network, bits]) => network.kind() === parsed.kind() && parsed.match(network, bits),
    );
    return inNetwork || isPublicAddress(address);
  }

  /**
   * What can be told of `url` before fetching it, for the API to refuse at once: a scheme other than
   * http(s), credentials, or a literal address the policy refuses. A host name is judged when fetched.
   */
  urlProblem(url: string): string | null {
    if (!URL.canParse(url)) return null;
    const target = new URL(url);
    if (target.protocol !== 'http:' && target.protocol !== 'https:') return null;
    const hostname = target.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
    if (isIP(hostname) === 0 || this.allows(hostname, hostname)) return null;
    return refused(`${target.hostname} is not a public address`).message;
  }

  /** The body at `url`, following at most `maxRedirects` redirects, each hop checked. */
  async get(url: string, opts: FetchOptions): Promise<Buffer> {
    const signal = AbortSignal.timeout(opts.timeoutMs);
    let current = url;
    for (let hop = 0; ; hop++) {
      const res = await this.#request(current, opts, signal);
      const location = res.headers.location;
      if (res.statusCode !== undefined && res.statusCode >= 300 && res.statusCode < 400 && location) {
        res.resume();
        if (hop >= (opts.maxRedirects ?? DEFAULT_MAX_REDIRECTS)) {
          throw new FetchProblem('failed: too many redirects', false);
        }
        if (!URL.canParse(location, current)) throw new FetchProblem('failed: a redirect to no URL', false);
        current = new URL(location, current).href;
        continue;
      }
      if (res.statusCode === undefined || res.statusCode < 200 || res.statusCode >= 300) {
        res.resume();
        // The status stays out of the message: it would tell a caller what is listening where.
        throw new FetchProblem('failed: the server did not answer with the file', false);
      }
      return readBody(res, opts.maxBytes, signal);
    }
  }

  /** One request, its host checked before a socket exists and its addresses inside `lookup`. */
  #request(url: string, opts: FetchOptions, signal: AbortSignal): Promise<IncomingMessage> {
    const target = new URL(url);
    if (target.protocol !== 'http:' && target.protocol !== 'https:') {
      return Promise.reject(refused('only http and https URLs are fetched'));
    }
    if (target.username !== '' || target.password !== '') {
      return Promise.reject(refused('a URL with credentials is not fetched'));
    }
    const hostname = target.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
    // A literal address never reaches `lookup` (net.connect skips it), so it is judged here.
    if (isIP(hostname) !== 0 && !this.allows(hostname, hostname)) {
      return Promise.reject(refused(`${target.hostname} is not a public address`));
    }
    const lookup: LookupFunction = (name, options, callback) => {
      this.#resolve(name).then(
        (addresses) => {
          if (addresses.length === 0) {
            callback(new FetchProblem('failed: the host has no address', false), '', 0);
            return;
          }
          // Every address must pass: a name that answers one public and one private address is refused.
          if (!addresses.every(({ address }) => this.allows(hostname, address))) {
            callback(refused(`${hostname} resolves to an address that is not public`), '', 0);
            return;
          }
          if (options.all) callback(null, addresses);
          else callback(null, addresses[0]!.address, addresses[0]!.family);
        },
        () => callback(new FetchProblem('failed: the host name did not resolve', false), '', 0),
      );
    };
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<IncomingMessage>((resolve, reject) => {
      const req = send(target, { method: 'GET', headers: opts.headers ?? {}, lookup, signal, agent: false });
      req.once('response', resolve);
      req.once('error', (err) => reject(asProblem(err, signal)));
      req.end();
    });
  }
}

function asProblem(err: unknown, signal: AbortSignal): FetchProblem {
  if (err instanceof FetchProblem) return err;
  const cause = (err as { cause?: unknown }).cause;
  if (cause instanceof FetchProblem) return cause;
  return new FetchProblem(signal.aborted ? 'timed out' : 'failed', false);
}

async function readBody(res: IncomingMessage, maxBytes: number, signal: AbortSignal): Promise<Buffer> {
  const tooLarge = () => new FetchProblem(`failed: larger than ${maxBytes} bytes`, false);
  if (Number(res.headers['content-length'] ?? NaN) > maxBytes) {
    res.destroy();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of res) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) {
        res.destroy();
        throw tooLarge();
      }
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    if (err instanceof FetchProblem) throw err;
    throw new FetchProblem(signal.aborted ? 'timed out' : 'failed while reading', false);
  }
  return Buffer.concat(chunks);
}
