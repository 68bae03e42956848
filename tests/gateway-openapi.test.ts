import { beforeAll, describe, expect, test } from 'bun:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { serviceNames } from '@crm/contracts';
import { type Stack, sharedStack } from '@crm/testing';
import { parse } from 'yaml';

let stack: Stack;
let yamlText: string;
let doc: any;

beforeAll(async () => {
  stack = await sharedStack();
  const res = await fetch(`${stack.gatewayUrl}/openapi/v1.yaml`);
  expect(res.status).toBe(200);
  yamlText = await res.text();
  doc = parse(yamlText);
}, 180_000);

describe('OpenAPI document (contract §2)', () => {
  test('is public YAML, also under /v1, and passes a real OpenAPI 3.1 validator', async () => {
    const underV1 = await fetch(`${stack.gatewayUrl}/v1/openapi/v1.yaml`);
    expect(underV1.status).toBe(200);
    expect(underV1.headers.get('content-type')).toContain('yaml');
    expect(parse(await underV1.text()).paths).toEqual(doc.paths);
    expect(doc.openapi).toBe('3.1.0');
    const validated = await SwaggerParser.validate(structuredClone(doc));
    expect(Object.keys(validated.paths ?? {}).length).toBeGreaterThan(2);
  });

  test('is generated from every service’s route schemas, plus the gateway’s own routes', async () => {
    for (const name of serviceNames) {
      const described = await stack.call(name, 'GET', '/internal/openapi.json', { headers: { 'x-internal-token': stack.internalToken } });
      expect(described.status).toBe(200);
      for (const [path, item] of Object.entries<any>(described.body.paths)) {
        for (const method of Object.keys(item)) expect(doc.paths[path]?.[method]).toBeDefined();
      }
    }
    // Internal routes are never described, and need the internal credential.
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/internal'))).toBe(false);
    expect((await stack.call('sales', 'GET', '/internal/openapi.json')).status).toBe(401);
    expect(doc.paths['/v1/health'].get).toBeDefined();
    expect(doc.paths['/v1/audit-logs'].get.parameters.map((p: any) => p.name ?? p.$ref)).toEqual(
      expect.arrayContaining(['per_page', 'page', 'from', 'to', 'status', 'method', 'path']),
    );
    const users = doc.paths['/v1/users'].get;
    expect(users.responses['200'].content['application/json'].schema.properties.data.items.required).toEqual(['id', 'name', 'email']);
    // Coerced query integers are described as integers (with their bounds), not as Elysia's string-or-number coercion.
    expect(users.parameters.find((p: any) => p.name === 'per_page').schema.type).toBe('integer');
    const auditPerPage = doc.paths['/v1/audit-logs'].get.parameters.find((p: any) => p.name === 'per_page');
    expect(auditPerPage.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 });
  });

  test('describes the key, the error envelope, the shared headers and the gateway’s errors', () => {
    expect(doc.components.securitySchemes.ApiKey).toEqual(expect.objectContaining({ type: 'apiKey', in: 'header', name: 'x-api-key' }));
    expect(doc.security).toEqual([{ ApiKey: [] }]);
    expect(doc.components.schemas.Error.properties.error.required).toEqual(['type', 'message', 'request_id']);
    expect(doc.components.parameters.IdempotencyKey).toMatchObject({ name: 'Idempotency-Key', in: 'header' });
    expect(doc.components.parameters.RequestId).toMatchObject({ name: 'X-Request-ID', in: 'header' });
    const create = doc.paths['/v1/contacts']?.post ?? doc.paths['/v1/users'].get;
    const refs = create.parameters.map((p: any) => p.$ref).filter(Boolean);
    expect(refs).toContain('#/components/parameters/RequestId');
    const success = Object.entries<any>(create.responses).find(([status]) => Number(status) < 300)?.[1];
    expect(Object.keys(success.headers)).toEqual(expect.arrayContaining(['X-Request-ID', 'RateLimit-Policy', 'RateLimit']));
    expect(create.responses['429']).toEqual({ $ref: '#/components/responses/RateLimited' });
    expect(Object.keys(doc.components.responses.RateLimited.headers)).toContain('Retry-After');
    if (doc.paths['/v1/contacts']?.post) {
      expect(refs).toContain('#/components/parameters/IdempotencyKey');
      expect(create.responses['409']).toBeDefined();
    }
  });

  /** Every list of the API (contract §22): the paths and their single-resource paths (§24). */
  const LISTS = [
    '/v1/contacts',
    '/v1/opportunities',
    '/v1/orders',
    '/v1/products',
    '/v1/product-categories',
    '/v1/documents',
    '/v1/contacts/{identifier}/documents',
    '/v1/opportunities/{id}/documents',
    '/v1/document-categories',
    '/v1/users',
    '/v1/webhooks',
    '/v1/webhooks/{id}/deliveries',
    '/v1/audit-logs',
    '/v1/events',
  ];
  const RESOURCES = [
    '/v1/contacts/{identifier}',
    '/v1/opportunities/{id}',
    '/v1/orders/{reference}',
    '/v1/products/{reference}',
    '/v1/product-categories/{id}',
    '/v1/documents/{id}',
    '/v1/webhooks/{id}',
  ];
  const deref = (node: any): any =>
    node?.$ref
      ? deref(
          node.$ref
            .slice(2)
            .split('/')
            .reduce((at: any, k: string) => at?.[k], doc),
        )
      : node;
  const jsonSchema = (response: any) => deref(deref(response)?.content?.['application/json']?.schema);
  /** The member types of a `type | null` union, sorted. */
  const unionTypes = (schema: any) => (deref(schema)?.anyOf ?? []).map((s: any) => s.type).sort();

  test('every list documents cursor mode: the cursor parameter, next_cursor, nullable counts and the Link header (§22)', () => {
    const lists = Object.entries<any>(doc.paths).filter(([, item]) => jsonSchema(item.get?.responses?.['200'])?.properties?.pagination);
    const problems: string[] = [];
    for (const path of LISTS) if (!lists.some(([p]) => p === path)) problems.push(`${path}: no list operation`);
    for (const [path, item] of lists) {
      const op = item.get;
      const cursor = op.parameters.find((p: any) => p.name === 'cursor');
      if (cursor?.in !== 'query' || cursor.schema?.type !== 'string') problems.push(`${path}: no cursor query parameter`);
      if (!/cursor/i.test(`${cursor?.description ?? ''}${cursor?.schema?.description ?? ''}`)) problems.push(`${path}: cursor undescribed`);
      const pagination = deref(jsonSchema(op.responses['200']).properties.pagination);
      if (JSON.stringify(unionTypes(pagination.properties?.next_cursor)) !== '["null","string"]')
        problems.push(`${path}: pagination.next_cursor is not a nullable string`);
      for (const count of ['total', 'current_page', 'last_page'])
        if (JSON.stringify(unionTypes(pagination.properties?.[count])) !== '["integer","null"]')
          problems.push(`${path}: pagination.${count} is not a nullable integer`);
      if (op.responses['200'].headers?.Link?.$ref !== '#/components/headers/Link') problems.push(`${path}: no Link header`);
    }
    expect(problems).toEqual([]);
    expect(doc.components.headers.Link.description).toContain('rel="next"');
  });

  test('single resources document ETag, If-None-Match → 304, If-Match → 412 precondition_failed (§24)', () => {
    const problems: string[] = [];
    for (const path of RESOURCES) {
      const item = doc.paths[path];
      if (!item?.get) {
        problems.push(`${path}: no GET`);
        continue;
      }
      const params = (op: any) => op.parameters.map((p: any) => p.$ref ?? p.name);
      if (item.get.responses['200'].headers?.ETag?.$ref !== '#/components/headers/ETag') problems.push(`${path}: GET without ETag`);
      if (!params(item.get).includes('#/components/parameters/IfNoneMatch')) problems.push(`${path}: GET without If-None-Match`);
      if (item.get.responses['304']?.$ref !== '#/components/responses/NotModified') problems.push(`${path}: GET without 304`);
      if (params(item.get).includes('#/components/parameters/IfMatch')) problems.push(`${path}: GET with If-Match`);
      for (const method of ['put', 'patch', 'delete']) {
        const op = item[method];
        if (!op) continue;
        if (!params(op).includes('#/components/parameters/IfMatch')) problems.push(`${path}: ${method} without If-Match`);
        if (op.responses['412']?.$ref !== '#/components/responses/PreconditionFailed') problems.push(`${path}: ${method} without 412`);
        const success = Object.entries<any>(op.responses).find(([status]) => status.startsWith('2'))?.[1];
        if (method !== 'delete' && success?.headers?.ETag?.$ref !== '#/components/headers/ETag')
          problems.push(`${path}: ${method} without ETag`);
      }
    }
    // Creations answer a single resource too, so they carry its ETag; lists and deletions do not.
    const created = doc.paths['/v1/contacts'].post.responses['201'];
    if (created.headers?.ETag === undefined) problems.push('POST /v1/contacts without ETag');
    if (doc.paths['/v1/contacts'].get.responses['200'].headers?.ETag) problems.push('GET /v1/contacts (a list) with ETag');
    if (doc.paths['/v1/contacts'].post.parameters.some((p: any) => p.$ref === '#/components/parameters/IfMatch'))
      problems.push('POST /v1/contacts with If-Match');
    expect(problems).toEqual([]);

    expect(doc.components.parameters.IfMatch).toMatchObject({ name: 'If-Match', in: 'header', required: false });
    expect(doc.components.parameters.IfNoneMatch).toMatchObject({ name: 'If-None-Match', in: 'header', required: false });
    expect(doc.components.responses.NotModified.content).toBeUndefined();
    expect(Object.keys(doc.components.responses.NotModified.headers)).toContain('ETag');
    expect(doc.components.responses.PreconditionFailed.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    expect(doc.components.schemas.Error.properties.error.properties.type.enum).toEqual(
      expect.arrayContaining(['validation_error', 'not_found', 'precondition_failed', 'idempotency_key_reused']),
    );
  });

  test('the description explains page and cursor mode, Link, ETags, conditional requests and every error type', () => {
    const text: string = doc.info.description;
    for (const words of [
      'Cursor mode',
      'next_cursor',
      'rel="next"',
      'ETag',
      'If-None-Match',
      'If-Match',
      '304',
      '412',
      'precondition_failed',
    ])
      expect(text).toContain(words);
    for (const type of doc.components.schemas.Error.properties.error.properties.type.enum) expect(text).toContain(`\`${type}\``);
  });

  test('GET /docs serves an interactive reference with local assets only (works offline)', async () => {
    const res = await fetch(`${stack.gatewayUrl}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const html = await res.text();
    expect(html).toContain('/openapi/v1.yaml');
    expect(html).not.toMatch(/(src|href)="https?:/);
    for (const asset of html.match(/\/docs\/assets\/[\w.-]+/g) ?? []) {
      const file = await fetch(stack.gatewayUrl + asset);
      expect(file.status).toBe(200);
      expect((await file.arrayBuffer()).byteLength).toBeGreaterThan(100);
    }
    expect(html).toContain('/docs/assets/swagger-ui-bundle.js');
    expect((await fetch(`${stack.gatewayUrl}/docs/assets/..%2Fpackage.json`)).status).toBe(404);
  });
});
