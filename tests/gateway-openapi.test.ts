import { beforeAll, describe, expect, test } from 'bun:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { eventPayloads, eventTypes, serviceNames } from '@crm/contracts';
import { errorStatus } from '@crm/http';
import { type Stack, sharedStack } from '@crm/testing';
import { parse } from 'yaml';
import { mimeTypes } from '../services/documents/src/uploads/file-types.ts';
import { deref as derefIn, documentValidator, type Json, mediaExample, operationsOf } from './openapi-document.ts';

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
    const params = (op: any) => op.parameters.map((p: any) => deref(p));
    expect(params(doc.paths['/v1/audit-logs'].get).map((p: any) => p.name)).toEqual(
      expect.arrayContaining(['per_page', 'page', 'from', 'to', 'status', 'method', 'path']),
    );
    const users = doc.paths['/v1/users'].get;
    expect(jsonSchema(users.responses['200']).properties.data.items).toEqual({ $ref: '#/components/schemas/AccountUser' });
    expect(doc.components.schemas.AccountUser.required).toEqual(['id', 'name', 'email']);
    // Coerced query integers are described as integers (with their bounds), not as Elysia's string-or-number coercion.
    expect(params(users).find((p: any) => p.name === 'per_page').schema.type).toBe('integer');
    const auditPerPage = params(doc.paths['/v1/audit-logs'].get).find((p: any) => p.name === 'per_page');
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
      const cursor = op.parameters.map((p: any) => deref(p)).find((p: any) => p.name === 'cursor');
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

describe('OpenAPI document: named schemas, ids, bounds, examples, webhooks, descriptions (issue 17)', () => {
  const deref = (node: any): any => derefIn(doc, node);
  const schemas = () => doc.components.schemas as Json;
  const allOperations = () => [...operationsOf(doc), ...operationsOf(doc, 'webhooks')];
  /** Media types of the request body and the 2xx answers of an operation. */
  const mediaOf = (op: Json) => [
    ...Object.entries<Json>(deref(op.requestBody)?.content ?? {}).map(([type, media]) => ({ where: 'request', type, media })),
    ...Object.entries<Json>(op.responses ?? {})
      .filter(([status]) => status.startsWith('2'))
      .flatMap(([status, response]) =>
        Object.entries<Json>(deref(response).content ?? {}).map(([type, media]) => ({ where: status, type, media })),
      ),
  ];

  test('every resource, request body and answer is a named component, used by $ref', () => {
    const resources = [
      'Contact',
      'Location',
      'AccountUser',
      'ContactType',
      'Opportunity',
      'OpportunityStatus',
      'Order',
      'OrderLine',
      'OrderState',
    ];
    const more = [
      'Product',
      'Rate',
      'ProductCategory',
      'ProductCategoryTree',
      'Document',
      'DocumentCategory',
      'Webhook',
      'WebhookWithSecret',
    ];
    const shared = ['Delivery', 'FeedEvent', 'EventType', 'AuditLog', 'ListPagination', 'Error', 'Deleted', 'DeletedRef'];
    const bodies = [
      'ContactCreate',
      'ContactUpdate',
      'ContactBatch',
      'ContactUpsert',
      'OpportunityCreate',
      'OpportunityUpdate',
      'OrderCreate',
    ];
    const moreBodies = ['OrderUpdate', 'OrderBatch', 'ProductCreate', 'ProductUpdate', 'ProductBatch', 'ProductUpsert', 'WebhookCreate'];
    for (const name of [
      ...resources,
      ...more,
      ...shared,
      ...bodies,
      ...moreBodies,
      'ProductCategoryCreate',
      'WebhookUpdate',
      'DocumentUpload',
    ])
      expect(schemas()[name]).toBeDefined();
    const problems: string[] = [];
    for (const { path, method, op } of allOperations()) {
      for (const { where, type, media } of mediaOf(op)) {
        if (media.schema?.format === 'binary') continue;
        if (!media.schema?.$ref?.startsWith('#/components/schemas/')) problems.push(`${method} ${path} ${where} ${type}: inline schema`);
      }
      const list = deref(deref(op.responses?.['200'])?.content?.['application/json']?.schema);
      const ref = op.responses?.['200']?.content?.['application/json']?.schema?.$ref ?? '';
      if (list?.properties?.pagination && !/ListResponse$/.test(ref))
        problems.push(`${method} ${path}: list answer ${ref} is not a <Resource>ListResponse`);
      if (list?.properties?.pagination?.$ref !== undefined && list.properties.pagination.$ref !== '#/components/schemas/ListPagination')
        problems.push(`${method} ${path}: pagination is not ListPagination`);
    }
    expect(problems).toEqual([]);
    // Each named schema is described once: nothing titled is left inline.
    expect(JSON.stringify(doc.paths)).not.toContain('"title"');
    expect(JSON.stringify(doc.webhooks)).not.toContain('"title"');
  });

  test('no two services describe one schema name differently', async () => {
    const byName = new Map<string, Set<string>>();
    const visit = (node: unknown): void => {
      if (Array.isArray(node)) {
        for (const item of node) visit(item);
        return;
      }
      if (node === null || typeof node !== 'object') return;
      const { $id, examples: _examples, ...rest } = node as Json;
      const name = typeof $id === 'string' ? $id : typeof rest.title === 'string' ? rest.title : undefined;
      if (name) byName.set(name, (byName.get(name) ?? new Set()).add(JSON.stringify(rest)));
      for (const [key, value] of Object.entries(rest)) if (!['example', 'enum', 'const', 'default'].includes(key)) visit(value);
    };
    for (const name of serviceNames) {
      const described = await stack.call(name, 'GET', '/internal/openapi.json', { headers: { 'x-internal-token': stack.internalToken } });
      visit(described.body.paths);
    }
    expect([...byName].filter(([, variants]) => variants.size > 1).map(([name]) => name)).toEqual([]);
    expect(byName.size).toBeGreaterThan(60);
  });

  test('numeric path ids (id, document, delivery_id) are integers 1..2147483647', () => {
    const problems: string[] = [];
    let numeric = 0;
    for (const { path, method, op } of operationsOf(doc)) {
      for (const parameter of (op.parameters ?? []).map(deref).filter((p: Json) => p.in === 'path')) {
        // An event id is `evt_…`, not a number.
        if (!['id', 'document', 'delivery_id'].includes(parameter.name) || path.startsWith('/v1/events/')) continue;
        numeric++;
        if (JSON.stringify(parameter.schema) !== JSON.stringify({ minimum: 1, maximum: 2147483647, type: 'integer' }))
          problems.push(`${method} ${path} {${parameter.name}}: ${JSON.stringify(parameter.schema)}`);
      }
    }
    expect(problems).toEqual([]);
    expect(numeric).toBeGreaterThanOrEqual(24);
  });

  test('bounds and enums are declared as the code enforces them', () => {
    const problems: string[] = [];
    const lists = operationsOf(doc).filter(
      ({ method, op }) => method === 'get' && op.parameters?.some((p: Json) => deref(p).name === 'per_page'),
    );
    expect(lists.length).toBe(14);
    for (const { path, op } of lists) {
      const param = (name: string) => op.parameters.map(deref).find((p: Json) => p.name === name);
      if (JSON.stringify(param('per_page')?.schema) !== JSON.stringify({ minimum: 1, maximum: 100, default: 15, type: 'integer' }))
        problems.push(`${path}: per_page ${JSON.stringify(param('per_page')?.schema)}`);
      if (param('page')?.schema?.type !== 'integer' || param('page')?.schema?.minimum !== 1) problems.push(`${path}: page`);
    }
    expect(problems).toEqual([]);
    const enumOf = (schema: Json) => deref(schema)?.enum;
    expect(schemas().Error.properties.error.properties.type.enum).toEqual(Object.keys(errorStatus));
    for (const name of ['WebhookCreate', 'WebhookUpdate', 'Webhook'])
      expect(enumOf(schemas()[name].properties.events.items)).toEqual([...eventTypes, '*']);
    expect(enumOf(schemas().Opportunity.properties.status)).toEqual(['open', 'won', 'lost']);
    expect(enumOf(schemas().OpportunityCreate.properties.status)).toEqual(['open', 'won', 'lost']);
    expect(enumOf(schemas().Delivery.properties.status)).toEqual(['pending', 'delivered', 'failed']);
    expect(enumOf(schemas().FeedEvent.properties.type)).toEqual(eventTypes.filter((t) => t !== 'webhook.test'));
    expect(enumOf(schemas().EventType.properties.type)).toEqual([...eventTypes]);
    expect(enumOf(schemas().ContactUpsert.properties.id_property)).toEqual(['email', 'cif', 'name']);
    expect(enumOf(schemas().ProductUpsert.properties.id_property)).toEqual(['reference', 'sku']);
    expect(schemas().ContactBatch.properties.data).toMatchObject({ minItems: 1, maxItems: 100 });
    // The kit's own keywords (messages, byte limits) are not JSON Schema: they stay out of the document.
    for (const keyword of ['patternMessage', 'errorMessage', 'maxBytes', 'nullable'])
      expect(JSON.stringify(doc)).not.toContain(`"${keyword}"`);
  });

  test('every request body and 2xx answer has an example that is valid for its schema', () => {
    const validator = documentValidator(doc);
    const problems: string[] = [];
    let checked = 0;
    for (const { path, method, op } of allOperations()) {
      for (const { where, type, media } of mediaOf(op)) {
        if (media.schema?.format === 'binary') continue;
        const example = mediaExample(doc, media);
        const label = `${method} ${path} ${where} ${type}`;
        if (example === undefined) {
          problems.push(`${label}: no example`);
          continue;
        }
        checked++;
        for (const problem of validator.problems(media.schema, example)) problems.push(`${label}: ${problem}`);
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(100);
    // Swagger UI pre-fills "Try it out" with this body: the one the examples test sends.
    expect(mediaExample(doc, doc.paths['/v1/contacts'].post.requestBody.content['application/json'])).toMatchObject({
      name: 'Acme Ltd',
      type: 'client',
    });
  });

  test('the webhooks section: one entry per event type, its typed payload, the three Standard Webhooks headers', () => {
    expect(Object.keys(doc.webhooks)).toEqual([...eventTypes]);
    const problems: string[] = [];
    for (const type of eventTypes) {
      const op = doc.webhooks[type].post;
      const ref = op.requestBody.content['application/json'].schema.$ref as string;
      const envelope = deref({ $ref: ref });
      if (envelope?.properties?.type?.const !== type) problems.push(`${type}: body type is not the constant ${type}`);
      if (JSON.stringify(envelope?.required) !== '["id","type","timestamp","data"]')
        problems.push(`${type}: envelope ${envelope?.required}`);
      const data = envelope?.properties?.data ?? {};
      // The payload is the named resource schema of @crm/contracts (typed events), described once.
      if (!data.$ref?.startsWith('#/components/schemas/')) problems.push(`${type}: data is not a named schema`);
      const payload = eventPayloads[type] as Json;
      if (JSON.stringify(deref(data).required) !== JSON.stringify(payload.required))
        problems.push(`${type}: data is not its payload schema`);
      const headers = op.parameters.map(deref);
      const names = headers.map((h: Json) => `${h.in}:${h.name}:${h.required}`);
      if (JSON.stringify(names) !== '["header:webhook-id:true","header:webhook-timestamp:true","header:webhook-signature:true"]')
        problems.push(`${type}: headers ${names}`);
      if (JSON.stringify(op.security) !== '[]') problems.push(`${type}: the API key is not asked of a receiver`);
      if (!op.responses['200'] || !op.responses['410']) problems.push(`${type}: 2xx and 410 answers`);
    }
    expect(problems).toEqual([]);
    expect(deref(doc.webhooks['contact.created'].post.requestBody.content['application/json'].schema).properties.data).toEqual({
      $ref: '#/components/schemas/Contact',
    });
    const verify = doc.tags.find((t: Json) => t.name === 'Webhook events').description as string;
    for (const words of [
      'HMAC-SHA256',
      '<webhook-id>.<webhook-timestamp>.<body>',
      'whsec_',
      'separated by a space',
      'verifyWebhook',
      '410',
    ])
      expect(verify).toContain(words);
  });

  test('the download declares its content types and Content-Disposition', () => {
    const ok = doc.paths['/v1/documents/{id}/content'].get.responses['200'];
    expect(Object.keys(ok.content).sort()).toEqual([...new Set(['application/octet-stream', ...Object.values(mimeTypes)])].sort());
    for (const media of Object.values<Json>(ok.content)) expect(media.schema).toEqual({ type: 'string', format: 'binary' });
    expect(ok.headers['Content-Disposition'].description).toContain('attachment');
    expect(ok.headers['X-Request-ID']).toBeDefined();
  });

  test('every tag and every operation is described', () => {
    const problems: string[] = [];
    const tags = new Map<string, string>(doc.tags.map((t: Json) => [t.name, t.description]));
    for (const [name, description] of tags) if (!description || description.length < 20) problems.push(`tag ${name}: no description`);
    for (const { path, method, op } of allOperations()) {
      if (!op.summary) problems.push(`${method} ${path}: no summary`);
      if (!op.description || op.description.length < 20) problems.push(`${method} ${path}: no description`);
      for (const tag of op.tags ?? []) if (!tags.has(tag)) problems.push(`${method} ${path}: tag ${tag} not listed`);
      if (!op.tags?.length) problems.push(`${method} ${path}: no tag`);
    }
    expect(problems).toEqual([]);
  });
});
