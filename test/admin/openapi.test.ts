// /openapi.json is a valid OpenAPI 3.1 document, generated from the routes' schemas, that covers
// every /v1 route the app registered (and nothing outside /v1).
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { startAccessServer } from './access-helpers.js';

interface Document {
  openapi: string;
  paths: Record<
    string,
    Record<string, { description?: string; requestBody?: unknown; parameters?: unknown[] }>
  >;
}

describe('GET /openapi.json', () => {
  let server: TestServer;
  let doc: Document;

  beforeAll(async () => {
    server = await startAccessServer();
    const res = await fetch(`${server.baseUrl}/openapi.json`);
    expect(res.status).toBe(200);
    doc = (await res.json()) as Document;
  });
  afterAll(async () => {
    await server.close();
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(
      structuredClone(doc) as unknown as Parameters<Validator['validate']>[0],
    );
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('covers every /v1 route, with its role, and only /v1', () => {
    const documented = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const registered = server.app.callbridge.adminRoutes.map(
      (route) => `${route.method} ${route.url.replace(/:(\w+)/g, '{$1}')}`,
    );
    expect(registered.length).toBeGreaterThan(25);
    expect([...documented].sort()).toEqual([...new Set(registered)].sort());
    for (const route of server.app.callbridge.adminRoutes) {
      const operation = doc.paths[route.url.replace(/:(\w+)/g, '{$1}')]?.[route.method.toLowerCase()];
      expect(operation?.description, `${route.method} ${route.url}`).toContain(`Role: ${route.role}.`);
    }
  });

  it('describes bodies and parameters from the schemas the routes check', () => {
    expect(doc.paths['/v1/keys']!.post!.requestBody).toMatchObject({
      content: { 'application/json': { schema: { required: ['name', 'role'] } } },
    });
    expect(doc.paths['/v1/calls/{callSid}/hangup']!.post!.parameters).toEqual([
      expect.objectContaining({ name: 'callSid', in: 'path', required: true }),
    ]);
    const filters = (doc.paths['/v1/calls']!.get!.parameters as { name: string }[]).map((p) => p.name);
    expect(filters).toEqual(
      expect.arrayContaining(['direction', 'carrier', 'profile', 'campaign', 'number', 'outcome']),
    );
  });
});
