// The fetch policy lets a server-side fetch of a caller's URL reach public addresses only (and the
// hosts an operator allows): no connection is ever opened to a refused address, whatever form it is
// written in, whatever a host name resolves to and wherever a redirect points.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFetchPolicy } from '../../src/config/trust-policies.js';
import { FetchPolicy, type Resolve, isPublicAddress } from '../../src/trust/fetch-policy.js';

const OPTS = { timeoutMs: 5_000, maxBytes: 1_000_000 };

/** A loopback listener that counts every connection, answering each request as `answer` says. */
interface Listener {
  server: Server;
  port: number;
  connections: number;
  paths: string[];
}

const listeners: Listener[] = [];

async function listen(answer: (path: string, res: ServerResponse) => void): Promise<Listener> {
  const listener: Listener = { server: createServer(), port: 0, connections: 0, paths: [] };
  listener.server.on('connection', () => (listener.connections += 1));
  listener.server.on('request', (req, res) => {
    listener.paths.push(req.url ?? '');
    answer(req.url ?? '', res);
  });
  await new Promise<void>((resolve) => listener.server.listen(0, '127.0.0.1', resolve));
  listener.port = (listener.server.address() as AddressInfo).port;
  listeners.push(listener);
  return listener;
}

let trap: Listener;

beforeEach(async () => {
  trap = await listen((_, res) => res.writeHead(401).end('secret admin API'));
});

afterEach(async () => {
  for (const l of listeners.splice(0)) {
    l.server.closeAllConnections();
    await new Promise((resolve) => l.server.close(resolve));
  }
});

/** A resolver that knows only the names given, and counts its questions. */
function resolver(table: Record<string, string[]>): Resolve & { asked: string[] } {
  const asked: string[] = [];
  const resolve = async (name: string) => {
    asked.push(name);
    const addresses = table[name];
    if (!addresses) throw Object.assign(new Error(`ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolve, { asked });
}

async function problemOf(policy: FetchPolicy, url: string): Promise<{ code: string; message: string }> {
  try {
    await policy.get(url, OPTS);
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error(`${url} was fetched`);
}

describe('which addresses are public', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '0.0.0.0',
    '0.1.2.3',
    '100.64.0.1',
    '100.127.255.254',
    '224.0.0.1',
    '255.255.255.255',
    '240.0.0.1',
    '::1',
    '::',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    '::7f00:1',
    '64:ff9b::7f00:1',
    '2002:7f00:1::1',
    'not-an-address',
    '0x7f000001',
    '2130706433',
  ])('%s is not', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2001:4860:4860::8888', '::ffff:8.8.8.8'])(
    '%s is',
    (address) => {
      expect(isPublicAddress(address)).toBe(true);
    },
  );
});

describe('fetching a caller-supplied URL', () => {
  it.each([
    'http://127.0.0.1:PORT/v1/calls',
    'http://0x7f000001:PORT/',
    'http://2130706433:PORT/',
    'http://017700000001:PORT/',
    'http://127.1:PORT/',
    'http://[::ffff:127.0.0.1]:PORT/',
    'http://localhost:PORT/',
  ])('refuses loopback written as %s and opens no connection', async (url) => {
    const problem = await problemOf(new FetchPolicy(), url.replace('PORT', String(trap.port)));
    expect(problem.code).toBe('CALLBRIDGE_FETCH_REFUSED');
    expect(problem.message).toMatch(
      /^refused by the fetch policy: .* (is not a public address|resolves to an address that is not public)/,
    );
    expect(trap.connections).toBe(0);
  });

  it('refuses a name that resolves to a private address, or to a public and a private one', async () => {
    const resolve = resolver({ 'evil.example': ['127.0.0.1'], 'mixed.example': ['8.8.8.8', '127.0.0.1'] });
    const policy = new FetchPolicy(undefined, resolve);
    for (const host of ['evil.example', 'mixed.example']) {
      const problem = await problemOf(policy, `http://${host}:${trap.port}/`);
      expect(problem.message).toBe(
        `refused by the fetch policy: ${host} resolves to an address that is not public (only public addresses, or hosts in FETCH_ALLOWED_HOSTS)`,
      );
    }
    expect(trap.connections).toBe(0);
  });

  it('connects to the very address it checked: an allowed name is resolved once, and reached there', async () => {
    const resolve = resolver({ 'files.internal': ['127.0.0.1'] });
    const files = await listen((_, res) => res.writeHead(200).end('RIFF'));
    const policy = new FetchPolicy(readFetchPolicy({ FETCH_ALLOWED_HOSTS: 'files.internal' }), resolve);
    const body = await policy.get(`http://files.internal:${files.port}/message.wav`, OPTS);
    expect(body.toString()).toBe('RIFF');
    expect(resolve.asked).toEqual(['files.internal']);
    expect(files.paths).toEqual(['/message.wav']);
  });

  it('lets an allowed network through', async () => {
    const files = await listen((_, res) => res.writeHead(200).end('ok'));
    const policy = new FetchPolicy(readFetchPolicy({ FETCH_ALLOWED_HOSTS: '127.0.0.0/8' }));
    expect((await policy.get(`http://127.0.0.1:${files.port}/a`, OPTS)).toString()).toBe('ok');
  });

  it('checks every redirect: an allowed host that redirects to loopback is refused before connecting', async () => {
    const resolve = resolver({ 'files.internal': ['127.0.0.1'] });
    const files = await listen((path, res) => {
      if (path === '/moved') res.writeHead(302, { location: `http://127.0.0.1:${trap.port}/admin` }).end();
      else res.writeHead(302, { location: `http://0x7f000001:${trap.port}/admin` }).end();
    });
    const policy = new FetchPolicy(readFetchPolicy({ FETCH_ALLOWED_HOSTS: 'files.internal' }), resolve);
    for (const path of ['/moved', '/moved-odd']) {
      const problem = await problemOf(policy, `http://files.internal:${files.port}${path}`);
      expect(problem.message).toMatch(/^refused by the fetch policy: 127\.0\.0\.1 is not a public address/);
    }
    expect(files.paths).toEqual(['/moved', '/moved-odd']);
    expect(trap.connections).toBe(0);
  });

  it("never repeats the remote's answer: a refusal is told as a failure with no status", async () => {
    const policy = new FetchPolicy(readFetchPolicy({ FETCH_ALLOWED_HOSTS: '127.0.0.1' }));
    const problem = await problemOf(policy, `http://127.0.0.1:${trap.port}/v1/calls`);
    expect(problem).toMatchObject({
      code: 'CALLBRIDGE_FETCH_FAILED',
      message: 'failed: the server did not answer with the file',
    });
    expect(trap.paths).toEqual(['/v1/calls']);
  });

  it('refuses other schemes and URLs with credentials', async () => {
    const policy = new FetchPolicy(readFetchPolicy({ FETCH_ALLOWED_HOSTS: '127.0.0.1' }));
    expect((await problemOf(policy, 'file:///etc/passwd')).message).toMatch(/only http and https/);
    expect((await problemOf(policy, `http://u:p@127.0.0.1:${trap.port}/`)).message).toMatch(/credentials/);
    expect(trap.connections).toBe(0);
  });
});

describe('what the API refuses before any fetch', () => {
  it('names a literal private address, and leaves host names and allowed networks to the fetch', () => {
    const policy = new FetchPolicy(readFetchPolicy({ FETCH_ALLOWED_HOSTS: '10.0.0.0/8' }));
    for (const url of [
      'http://127.0.0.1/a.wav',
      'http://0x7f000001/',
      'https://[::1]/',
      'http://169.254.169.254/',
    ]) {
      expect(policy.urlProblem(url), url).toMatch(
        /^refused by the fetch policy: \S+ is not a public address/,
      );
    }
    for (const url of ['http://10.1.2.3/a.wav', 'https://files.example.com/a.wav', 'http://8.8.8.8/a.wav']) {
      expect(policy.urlProblem(url), url).toBeNull();
    }
  });
});

describe('FETCH_ALLOWED_HOSTS', () => {
  it('reads host names, addresses and networks', () => {
    expect(
      readFetchPolicy({ FETCH_ALLOWED_HOSTS: 'Files.Example.com., 10.0.0.0/8, 192.0.2.7, fd00::/8' }),
    ).toEqual({
      allowedHosts: ['files.example.com'],
      allowedCidrs: ['10.0.0.0/8', '192.0.2.7/32', 'fd00::/8'],
    });
  });

  it.each(['10.0.0.0/33', 'bad host', '0x7f000001', '2130706433', 'a..b', '-x.example', '10.0.0.1/8/2'])(
    '%s is refused in one line',
    (entry) => {
      let error: Error | null = null;
      try {
        readFetchPolicy({ FETCH_ALLOWED_HOSTS: entry });
      } catch (err) {
        error = err as Error;
      }
      expect(error).toMatchObject({ code: 'CALLBRIDGE_CONFIG_INVALID' });
      expect(error!.message).toBe(
        `FETCH_ALLOWED_HOSTS: each entry must be a host name, an IP address or a CIDR, got ${JSON.stringify(entry)}`,
      );
    },
  );
});
