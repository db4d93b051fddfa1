// The console names only paths and fields that /openapi.json describes: every path it passes to its
// client is a path of the document, and every field of every schema it is typed by (src/api) is a
// field of the document's schema for the same answer, request or event stream.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { TSchema } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallRecord, Campaign, LiveCall, OPERATIONS } from '../../src/api/index.js';
import { del, get, post } from '../../web/src/api.js';
import { startAccessServer } from '../admin/access-helpers.js';
import { ROOT } from '../helpers/build.js';
import type { TestServer } from '../helpers/server.js';

type Json = Record<string, unknown>;
interface Document {
  paths: Record<string, Record<string, Json>>;
  components?: { schemas?: Record<string, Json> };
}

const SHARED: Record<string, Json> = { LiveCall, CallRecord, Campaign } as unknown as Record<string, Json>;

/** `items[].name`, `calls[].turns[].content`, … : every field a schema declares, refs followed. */
function fieldsOf(schema: Json | undefined, resolve: (ref: string) => Json | undefined, at = ''): string[] {
  if (schema === undefined) return [];
  if (typeof schema.$ref === 'string') return fieldsOf(resolve(schema.$ref), resolve, at);
  const found: string[] = [];
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    for (const part of (schema[key] as Json[] | undefined) ?? []) found.push(...fieldsOf(part, resolve, at));
  }
  if (schema.items !== undefined) found.push(...fieldsOf(schema.items as Json, resolve, `${at}[]`));
  for (const [name, property] of Object.entries((schema.properties as Record<string, Json>) ?? {})) {
    const path = at === '' ? name : `${at}.${name}`;
    found.push(path, ...fieldsOf(property, resolve, path));
  }
  return [...new Set(found)];
}

/** The console's own sources: every `/v1/…` path literal it hands its client. */
function consolePaths(): { path: string; file: string }[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const full = join(dir, name);
      return statSync(full).isDirectory() ? walk(full) : /\.tsx?$/.test(name) ? [full] : [];
    });
  return walk(join(ROOT, 'web/src')).flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/[`'"](\/v1\/[^`'"?]*)[`'"?]/g)].map((m) => ({
      path: m[1]!,
      file: relative(ROOT, file),
    })),
  );
}

/** Never called: `npm run typecheck` fails unless the client refuses what the contract lacks. */
export function refusedByTheTypeCheck(): void {
  // @ts-expect-error a path the contract lacks
  void get('/v1/calls/{callSid}/notes', { params: { callSid: 'CA1' } });
  // @ts-expect-error a method the path does not answer
  void del('/v1/campaigns/{id}', { params: { id: 'cmp_1' } });
  // @ts-expect-error a free-string path
  void get(`/v1/calls/${'CA1'}`);
  // @ts-expect-error a field the key's schema lacks
  void get('/v1/keys').then((list) => list.keys[0]?.secretHash);
  // @ts-expect-error a body field the schema lacks
  void post('/v1/keys', { body: { json: { name: 'ops', role: 'viewer', scope: 'all' } } });
  // @ts-expect-error a query parameter the listing lacks
  void get('/v1/audit', { query: { sort: 'oldest' } });
}

describe('the console and /openapi.json', () => {
  let server: TestServer;
  let doc: Document;
  const resolve = (ref: string) => doc.components?.schemas?.[ref.split('/').pop()!];
  const contract = (ref: string) => SHARED[ref.split('/').pop()!];

  beforeAll(async () => {
    server = await startAccessServer();
    const res = await fetch(`${server.baseUrl}/openapi.json`);
    expect(res.status).toBe(200);
    doc = (await res.json()) as Document;
  });
  afterAll(async () => {
    await server.close();
  });

  it('every path the console names is a path of the document', () => {
    const named = consolePaths();
    expect(named.length).toBeGreaterThan(15);
    const missing = named.filter(({ path }) => doc.paths[path] === undefined);
    expect(missing).toEqual([]);
    // A path assembled from strings would escape this check: the client fills {parameters} itself.
    expect(named.filter(({ path }) => path.includes('${')).map(({ file }) => file)).toEqual([]);
  });

  it('the document serves every operation of the contract, and only those', () => {
    const documented = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method} ${path}`),
    );
    const contracted = Object.entries(OPERATIONS).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method} ${path}`),
    );
    expect(documented.sort()).toEqual(contracted.sort());
  });

  it("every field of the contract's answers, bodies and query strings is in the document", () => {
    const missing: string[] = [];
    let checked = 0;
    for (const [path, methods] of Object.entries(OPERATIONS)) {
      for (const [method, operation] of Object.entries(methods) as [string, Json][]) {
        const documented = doc.paths[path]?.[method] as Json;
        const compare = (where: string, ours: Json | undefined, theirs: Json | undefined) => {
          const have = new Set(fieldsOf(theirs, resolve));
          for (const field of fieldsOf(ours, contract)) {
            checked++;
            if (!have.has(field)) missing.push(`${method} ${path} ${where}: ${field}`);
          }
        };
        const responses = (documented.responses ?? {}) as Record<string, Json>;
        for (const [status, schema] of Object.entries(operation.response as Record<string, Json>)) {
          const content = responses[status]?.content as Record<string, { schema: Json }> | undefined;
          compare(`answer ${status}`, schema, content?.['application/json']?.schema);
        }
        const body = operation.body as Json | undefined;
        const bodies = ((documented.requestBody as Json | undefined)?.content ?? {}) as Record<
          string,
          { schema: Json }
        >;
        if (body !== undefined) {
          const json = (body.content as Record<string, { schema: Json }> | undefined)?.['application/json'];
          compare('body', json?.schema ?? body, bodies['application/json']?.schema);
        }
        const query = operation.querystring as TSchema | undefined;
        const parameters = ((documented.parameters ?? []) as { name: string; in: string }[])
          .filter((p) => p.in === 'query')
          .map((p) => p.name);
        for (const name of Object.keys(query?.properties ?? {})) {
          checked++;
          if (!parameters.includes(name)) missing.push(`${method} ${path} query: ${name}`);
        }
      }
    }
    expect(checked).toBeGreaterThan(200);
    expect(missing).toEqual([]);
  });
});
