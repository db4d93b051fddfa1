// docker-compose.yml as a fleet (there is no Docker engine here, so this reads the file): three
// instances with their own INSTANCE_ID and otherwise one environment, at the addresses the
// balancer's rendered configuration names, behind the balancer that TRUST_PROXY names, stopped
// slowly enough to drain; and both shipped balancer configurations pass `nginx -t`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { COMPOSE_INSTANCES, ROOT } from '../../scripts/sync-deploy.mjs';
import { checkHttpConfig, NGINX } from '../helpers/nginx.js';
import { DEFAULT_DRAIN_TIMEOUT_MS, FAREWELL_WAIT_MS } from './drain.js';

interface Service {
  image?: string;
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  stop_grace_period?: string;
  depends_on?: string[] | Record<string, unknown>;
  networks?: Record<string, { ipv4_address?: string } | null>;
}
const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
  networks: Record<string, { ipam: { config: Array<{ subnet: string }> } }>;
};
const services = compose.services;
const instanceNames = Object.keys(services).filter((name) => /^callbridge-\d+$/.test(name));
const addressOf = (service: Service) => Object.values(service.networks ?? {})[0]?.ipv4_address;
/** A compose duration such as 11m or 90s, in ms. */
const durationMs = (text = '10s') =>
  Number(/^(\d+)([ms])$/.exec(text)?.[1]) * (text.endsWith('m') ? 60_000 : 1_000);

describe('docker-compose.yml as a fleet', () => {
  it('runs three instances, each named by its INSTANCE_ID, with one environment otherwise', () => {
    expect(instanceNames).toEqual(['callbridge-1', 'callbridge-2', 'callbridge-3']);
    const { INSTANCE_ID: _first, ...shared } = services['callbridge-1']!.environment!;
    for (const name of instanceNames) {
      const { INSTANCE_ID, ...rest } = services[name]!.environment!;
      expect(INSTANCE_ID).toBe(name);
      expect(rest).toEqual(shared);
    }
    expect(shared.REDIS_URL).toBe('redis://redis:6379');
    // One admin token for the fleet, required; the rest comes from .env (compose-schema.test.ts).
    expect(shared.ADMIN_TOKEN).toMatch(/^\$\{ADMIN_TOKEN:\?/);
  });

  it('puts each instance at the address the balancer configuration routes its name to', () => {
    expect(instanceNames.map((name) => ({ name, address: `${addressOf(services[name]!)}:8080` }))).toEqual(
      COMPOSE_INSTANCES,
    );
    const site = readFileSync(join(ROOT, 'deploy/nginx/compose.conf'), 'utf8');
    for (const { name, address } of COMPOSE_INSTANCES) {
      expect(site).toContain(`upstream callbridge_media_${name} {\n    server ${address};`);
    }
    const subnet = compose.networks.callbridge!.ipam.config[0]!.subnet;
    expect(subnet).toBe('172.28.0.0/24');
    for (const service of [...instanceNames, 'balancer'])
      expect(addressOf(services[service]!)).toMatch(/^172\.28\.0\.\d+$/);
  });

  it('puts the balancer in front: the published port, the trusted proxy, the rendered site', () => {
    const balancer = services.balancer!;
    expect(balancer.volumes).toContain('./deploy/nginx/compose.conf:/etc/nginx/conf.d/default.conf:ro');
    expect(balancer.ports).toEqual(['8080:8080']);
    expect(readFileSync(join(ROOT, 'deploy/nginx/compose.conf'), 'utf8')).toContain('listen 8080;');
    for (const name of instanceNames) {
      const env = services[name]!.environment!;
      expect(env.TRUST_PROXY).toBe(addressOf(balancer));
      expect(env.PUBLIC_URL).toBe('${PUBLIC_URL:-http://127.0.0.1:8080}');
      expect(services[name]!.ports).toBeUndefined();
    }
  });

  it('gives instances and balancer time to drain live calls before they are killed', () => {
    expect(FAREWELL_WAIT_MS).toBeGreaterThan(0);
    for (const name of [...instanceNames, 'balancer']) {
      expect(durationMs(services[name]!.stop_grace_period)).toBeGreaterThan(
        DEFAULT_DRAIN_TIMEOUT_MS + FAREWELL_WAIT_MS,
      );
    }
  });
});

describe.skipIf(!NGINX)('the shipped balancer configurations', () => {
  it.each(['deploy/nginx/callbridge.conf', 'deploy/nginx/compose.conf'])('%s passes nginx -t', (file) => {
    const check = checkHttpConfig(readFileSync(join(ROOT, file), 'utf8'));
    expect(check.ok, check.output).toBe(true);
  });
});
