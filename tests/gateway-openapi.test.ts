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
