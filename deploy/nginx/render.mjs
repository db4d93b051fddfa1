#!/usr/bin/env node
// Renders the nginx configuration of a callbridge fleet's balancer from its instance list, and
// keeps it in step with each instance's readiness.
//
//   node deploy/nginx/render.mjs [options] NAME=HOST:PORT …
//     --listen [ADDRESS:]PORT       where nginx listens (default 80)
//     --server-name NAME            server_name (default _)
//     --tls-certificate FILE        with --tls-certificate-key: listen with TLS
//     --tls-certificate-key FILE
//     --out FILE                    write there (atomically) instead of to stdout
//     --watch                       with --out: probe every instance's /readyz every --interval-ms
//     --interval-ms MS              (default 5000) and, when readiness changes, rewrite the file and
//     --reload COMMAND              run the reload command (default "nginx -s reload"; split on spaces)
//
// NAME is the instance's INSTANCE_ID: media URLs name it (/media/<carrier>/<NAME>/…) and the
// balancer routes them to HOST:PORT. Open-source nginx has no active health checks, so readiness
// comes from --watch: an instance whose /readyz does not answer 200 (draining, starting, down) is
// rendered `down` for webhooks and the admin API, and nginx is reloaded; its media streams still
// reach it, so the calls it answered before draining connect. Passive checks (max_fails) cover the
// time between probes.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { renameSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs, promisify } from 'node:util';

/** Media streams are calls: an hour and more. callbridge pings each every 15 s, so a dead one is noticed anyway. */
const MEDIA_TIMEOUT = '2h';
/** Carriers give up on a webhook within seconds; the admin API's slowest call (a CSV export) within a minute. */
const REQUEST_TIMEOUT = '60s';
/** Above the gateway's default body limit (1 MiB), so callbridge itself answers an oversized webhook. */
const MAX_BODY = '2m';
const PROBE_TIMEOUT_MS = 2_000;

const INSTANCE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
const ADDRESS = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/;

/**
 * @typedef {{ name: string, address: string, ready?: boolean }} Instance
 * @typedef {{ listen?: number | string, serverName?: string, tls?: { certificate: string, certificateKey: string } }} Site
 */

/** Parses `NAME=HOST:PORT`; throws a one-line error naming what is wrong. */
export function parseInstance(text) {
  const at = text.indexOf('=');
  const name = text.slice(0, at);
  const address = text.slice(at + 1);
  if (at < 1 || !INSTANCE_NAME.test(name)) {
    throw new Error(
      `instance ${JSON.stringify(text)}: the name before = must be an INSTANCE_ID (letters, digits, . _ -)`,
    );
  }
  if (!ADDRESS.test(address))
    throw new Error(`instance ${JSON.stringify(text)}: the address must be HOST:PORT`);
  return { name, address, ready: true };
}

/** Identifies a rendering: the same instances, addresses and readiness give the same generation. */
export function generationOf(instances) {
  const text = instances.map((i) => `${i.name}=${i.address}:${i.ready === false ? 'down' : 'up'}`).join(',');
  return createHash('sha256').update(text).digest('hex').slice(0, 12);
}

const escapeRegex = (text) => text.replace(/[.\\+*?^$()[\]{}|]/g, '\\$&');
const mediaUpstreamOf = (name) => `callbridge_media_${name}`;

/** The headers every proxied request carries; repeated per location because nginx inherits none once a location sets its own. */
function forwardedHeaders(connection) {
  return [
    'proxy_set_header Host $http_host;',
    'proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
    'proxy_set_header X-Forwarded-Proto $scheme;',
    'proxy_set_header X-Forwarded-Host $http_host;',
    'proxy_set_header X-Forwarded-Port $server_port;',
    'proxy_http_version 1.1;',
    ...(connection === 'upgrade'
      ? ['proxy_set_header Upgrade $http_upgrade;', 'proxy_set_header Connection $connection_upgrade;']
      : ['proxy_set_header Connection "";']),
  ];
}

const block = (head, lines, indent = '') =>
  [
    `${indent}${head} {`,
    ...lines.map((line) => (line === '' ? '' : `${indent}    ${line}`)),
    `${indent}}`,
  ].join('\n');

/**
 * The configuration for the http context (Debian: /etc/nginx/conf.d/callbridge.conf).
 * @param {Instance[]} instances
 * @param {Site} [site]
 */
export function renderBalancerConfig(instances, site = {}) {
  if (instances.length === 0) throw new Error('at least one instance is needed');
  const names = new Set();
  for (const instance of instances) {
    parseInstance(`${instance.name}=${instance.address}`);
    if (names.has(instance.name)) throw new Error(`instance ${instance.name} is listed twice`);
    names.add(instance.name);
  }
  // Taking every instance out would answer nothing at all; with none ready, passive checks decide.
  const anyReady = instances.some((i) => i.ready !== false);
  const isDown = (instance) => anyReady && instance.ready === false;
  const listen = site.listen ?? 80;
  const generation = generationOf(instances);

  const spread = block('upstream callbridge', [
    'least_conn;',
    ...instances.map(
      (i) =>
        `server ${i.address} max_fails=3 fail_timeout=10s${isDown(i) ? ' down' : ''};  # ${i.name}${
          isDown(i) ? ': not ready (draining or starting)' : ''
        }`,
    ),
    'keepalive 32;',
  ]);

  const mediaUpstreams = instances.map((instance) =>
    block(`upstream ${mediaUpstreamOf(instance.name)}`, [
      `server ${instance.address};  # ${instance.name}, ready or not: its own calls`,
      ...instances
        .filter((other) => other !== instance)
        .map(
          (other) =>
            `server ${other.address} backup;  # ${other.name}, only should ${instance.name} be unreachable`,
        ),
    ]),
  );

  const mediaMap = block('map $uri $callbridge_media_upstream', [
    'default callbridge;',
    ...instances.map((i) => `~^/media/[^/]+/${escapeRegex(i.name)}(/|$) ${mediaUpstreamOf(i.name)};`),
  ]);

  const proxied = (path, connection, timeout, extra = []) =>
    block(
      `location ${path}`,
      [
        connection === 'upgrade'
          ? 'proxy_pass http://$callbridge_media_upstream;'
          : 'proxy_pass http://callbridge;',
        ...forwardedHeaders(connection),
        `proxy_read_timeout ${timeout};`,
        `proxy_send_timeout ${timeout};`,
        ...extra,
      ],
      '    ',
    );

  const listenLine = site.tls ? `listen ${listen} ssl;` : `listen ${listen};`;
  const tlsLines = site.tls
    ? [`ssl_certificate ${site.tls.certificate};`, `ssl_certificate_key ${site.tls.certificateKey};`]
    : [];

  const server = [
    'server {',
    `    ${listenLine}`,
    `    server_name ${site.serverName ?? '_'};`,
    ...tlsLines.map((line) => `    ${line}`),
    `    client_max_body_size ${MAX_BODY};`,
    '',
    '    # Webhooks of carriers and providers: any ready instance. One that cannot be reached, or that',
    '    # closes the connection as it stops (a rolling deploy), is tried no more: the webhook goes to',
    '    # the next. Safe for these POSTs: a call prepared twice uses one token, a status or a gateway',
    '    # event counts once (docs/deploy.md).',
    proxied('~ ^/(carriers/|webhooks/)', 'keepalive', REQUEST_TIMEOUT, [
      'proxy_next_upstream error timeout non_idempotent;',
    ]),
    '',
    '    # The admin API and the service info: any ready instance. A POST here (placing a call) is',
    '    # never sent twice.',
    proxied('~ ^/(v1/|$)', 'keepalive', REQUEST_TIMEOUT),
    '',
    "    # Call event feeds (Server-Sent Events): any ready instance; the fleet relays the call's events",
    '    # from the instance carrying it. Unbuffered, and open as long as a call.',
    proxied('^~ /calls/', 'keepalive', MEDIA_TIMEOUT, ['proxy_buffering off;']),
    '',
    '    # Media streams (WebSocket): to the instance the URL names, which prepared the call.',
    proxied('^~ /media/', 'upgrade', MEDIA_TIMEOUT, ['proxy_buffering off;']),
    '',
    '    # The balancer itself, for whatever checks it; the generation names this rendering.',
    block(
      'location = /balancer/healthz',
      ['access_log off;', 'default_type text/plain;', `return 200 "ok ${generation}\\n";`],
      '    ',
    ),
    '',
    '    # Nothing else is served: /metrics, /healthz and /readyz are per instance, read there.',
    block(
      'location /',
      [
        'default_type application/json;',
        'return 404 \'{"error": {"code": "CALLBRIDGE_NOT_FOUND", "message": "not served through the balancer"}}\';',
      ],
      '    ',
    ),
    '}',
  ].join('\n');

  return [
    '# callbridge fleet balancer, rendered by deploy/nginx/render.mjs: re-render rather than edit.',
    `# Generation ${generation}: ${instances.map((i) => `${i.name} ${i.address}${isDown(i) ? ' (down)' : ''}`).join(', ')}.`,
    '# Goes in the http context (Debian: /etc/nginx/conf.d/callbridge.conf). Each instance needs',
    '# TRUST_PROXY naming this balancer, so it reads the caller address from X-Forwarded-For.',
    '',
    '# Webhooks and the admin API: spread over the ready instances (least connections; three',
    '# failures within 10 s take an instance out for 10 s).',
    spread,
    '',
    '# Media streams: one upstream per instance, the others as backups, so a stream whose instance',
    '# is gone is still carried (the call starts afresh there).',
    ...mediaUpstreams.flatMap((u) => [u, '']),
    '# The instance segment of /media/<carrier>/<INSTANCE_ID>/… picks the upstream; an unknown or',
    '# missing name goes to any instance.',
    mediaMap,
    '',
    block('map $http_upgrade $connection_upgrade', ['default upgrade;', "'' close;"]),
    '',
    server,
    '',
  ].join('\n');
}

/** GET /readyz of each instance: ready when it answers 200 in time. */
export async function probeReadiness(instances, timeoutMs = PROBE_TIMEOUT_MS) {
  return Promise.all(
    instances.map(async (instance) => {
      try {
        const res = await fetch(`http://${instance.address}/readyz`, {
          signal: AbortSignal.timeout(timeoutMs),
        });
        await res.arrayBuffer();
        return { ...instance, ready: res.status === 200 };
      } catch {
        return { ...instance, ready: false };
      }
    }),
  );
}

/** Writes `text` to `file` so nginx never reads it half-written. */
export function writeAtomically(file, text) {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, file);
}

/**
 * One round of the readiness watch: probes, and when the readiness differs from `previous`
 * rewrites `out` and calls `reload`. Returns the instances as probed.
 */
export async function syncReadiness({ instances, site, out, previous, reload, timeoutMs }) {
  const probed = await probeReadiness(instances, timeoutMs);
  if (previous !== undefined && generationOf(probed) === generationOf(previous)) return probed;
  writeAtomically(out, renderBalancerConfig(probed, site));
  await reload();
  return probed;
}

async function main(argv) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      listen: { type: 'string' },
      'server-name': { type: 'string' },
      'tls-certificate': { type: 'string' },
      'tls-certificate-key': { type: 'string' },
      out: { type: 'string' },
      watch: { type: 'boolean' },
      'interval-ms': { type: 'string' },
      reload: { type: 'string' },
    },
  });
  const instances = positionals.map(parseInstance);
  const listen = values.listen ?? '80';
  const port = Number(listen.slice(listen.lastIndexOf(':') + 1));
  if (!Number.isInteger(port) || port < 1 || port > 65_535)
    throw new Error('--listen must be [ADDRESS:]PORT');
  if (Boolean(values['tls-certificate']) !== Boolean(values['tls-certificate-key'])) {
    throw new Error('--tls-certificate and --tls-certificate-key go together');
  }
  const site = {
    listen,
    serverName: values['server-name'],
    tls: values['tls-certificate']
      ? { certificate: values['tls-certificate'], certificateKey: values['tls-certificate-key'] }
      : undefined,
  };
  if (!values.watch) {
    const text = renderBalancerConfig(instances, site);
    if (values.out) writeAtomically(values.out, text);
    else process.stdout.write(text);
    return;
  }
  if (!values.out) throw new Error('--watch needs --out');
  const intervalMs = Number(values['interval-ms'] ?? 5_000);
  if (!Number.isInteger(intervalMs) || intervalMs < 100) throw new Error('--interval-ms must be 100 or more');
  const [command, ...args] = (values.reload ?? 'nginx -s reload').split(/\s+/).filter(Boolean);
  const reload = async () => {
    await promisify(execFile)(command, args);
  };
  let previous;
  for (;;) {
    try {
      const probed = await syncReadiness({ instances, site, out: values.out, previous, reload });
      if (previous === undefined || generationOf(probed) !== generationOf(previous)) {
        const down = probed.filter((i) => !i.ready).map((i) => i.name);
        process.stdout.write(
          `balancer: ${down.length === 0 ? 'every instance ready' : `not ready: ${down.join(', ')}`}\n`,
        );
      }
      previous = probed;
    } catch (err) {
      // Left unchanged: the next round tries again.
      process.stderr.write(`balancer: ${err instanceof Error ? err.message : String(err)}\n`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((err) => {
    process.stderr.write(`render.mjs: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
