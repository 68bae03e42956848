// Contract test: drives every operation of the published OpenAPI document against the real
// stack and checks each answer against the document: the status must be documented for the
// operation and a JSON body must match that status's schema. Request bodies are generated from
// the document's own request schemas (with a few domain hints so creations succeed), and ids
// of created resources feed the paths of later calls, so the test covers whatever endpoints
// exist when it runs.
import { beforeAll, describe, expect, test } from 'bun:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { type ApiResponse, type Stack, sharedStack, type TestTenant } from '@crm/testing';
import Ajv2020 from 'ajv/dist/2020.js';
import { parse } from 'yaml';

type Json = Record<string, any>;
let stack: Stack;
let tenant: TestTenant;
let doc: Json;

beforeAll(async () => {
  stack = await sharedStack();
  tenant = await stack.createTenant({ users: [{ email: 'owner@contract.test', name: 'Owner' }] });
  const text = await (await fetch(`${stack.gatewayUrl}/openapi/v1.yaml`)).text();
  doc = parse(text);
  await SwaggerParser.validate(structuredClone(doc) as never);
}, 180_000);

/** Follows a local `$ref` (`#/components/...`) inside the document. */
function deref<T = Json>(node: T): T {
  const ref = (node as Json)?.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return node;
  return deref(
    ref
      .slice(2)
      .split('/')
      .reduce((at: Json, key) => at?.[key], doc) as T,
  );
}

const unique = () => crypto.randomUUID().slice(0, 8);
/** Values a generic generator cannot guess; everything else comes from the schema. */
const learned: Record<string, unknown> = {};
const hints: Record<string, () => unknown> = {
  type: () => 'client',
  email: () => `c-${unique()}@contract.test`,
  users: () => ['owner@contract.test'],
  user_email: () => 'owner@contract.test',
  enterprise_identifier: () => String(learned.contact ?? 'missing'),
  product_category_ref: () => learned.category,
  opportunity_id: () => learned.opportunity,
  reference: () => `REF-${unique()}`,
  sku: () => `SKU-${unique()}`,
  url: () => 'http://127.0.0.1:9/contract-hook',
  events: () => ['*'],
  currency: () => 'EUR',
  parent_id: () => 0,
  vat: () => 21,
  products: () => (learned.product ? [{ reference: learned.product }] : undefined),
};

function sample(raw: Json | undefined, name = ''): unknown {
  if (!raw) return undefined;
  const schema = deref(raw);
  if (name && hints[name]) return hints[name]();
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  if (schema.default !== undefined && typeof schema.default !== 'object') return schema.default;
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) return sample(branches.find((b: Json) => b.type !== 'null') ?? branches[0], name);
  switch (schema.type) {
    case 'object': {
      const out: Json = {};
      for (const key of schema.required ?? []) out[key] = sample(schema.properties?.[key], key);
      for (const key of Object.keys(schema.properties ?? {})) if (!(key in out) && hints[key]) out[key] = hints[key]();
      for (const key of Object.keys(out)) if (out[key] === undefined) delete out[key];
      return out;
    }
    case 'array':
      return Array.from({ length: Math.max(1, schema.minItems ?? 0) }, () => sample(schema.items, name));
    case 'integer':
    case 'number':
      return Math.max(schema.minimum ?? 1, schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 1);
    case 'boolean':
      return false;
    case 'string':
      if (schema.format === 'email') return `s-${unique()}@contract.test`;
      if (schema.format === 'date') return '2026-01-15';
      if (schema.format === 'date-time') return new Date().toISOString();
      if (schema.format === 'uri') return 'http://127.0.0.1:9/x';
      return `Sample ${unique()}`.slice(0, Math.max(schema.maxLength ?? 255, 1));
    default:
      return undefined;
  }
}

interface Operation {
  method: string;
  path: string;
  op: Json;
}

/** Resources that others refer to are created first. */
const CREATION_ORDER = ['/v1/contacts', '/v1/product-categories', '/v1/products', '/v1/opportunities', '/v1/orders'];

/** Creations first (referenced resources before the rest), then reads, updates, actions, deletes last. */
function orderOf({ method, path }: Operation): number {
  const depth = path.split('{').length;
  const rank = { post: 0, get: 100, put: 200, patch: 250, delete: 400 }[method] ?? 300;
  const action = method === 'post' && depth > 1 ? 100 : 0;
  const creation = CREATION_ORDER.findIndex((p) => path.startsWith(p));
  return rank + action + depth * 10 + (creation === -1 ? CREATION_ORDER.length : creation);
}

const created = new Map<string, Json>();

/** Fills path parameters from resources created earlier (by collection path); unknown → a missing id. */
function concretePath(path: string): string {
  return path.replace(/\{([^}]+)\}/g, (_m, param: string, offset: number) => {
    const collection = path.slice(0, offset - 1);
    const resource = created.get(collection);
    const value = param === 'reference' ? resource?.reference : resource?.id;
    return encodeURIComponent(String(value ?? '999999999'));
  });
}

function remember({ method, path }: Operation, body: Json) {
  const data = body?.data;
  if (!data || Array.isArray(data) || typeof data !== 'object') return;
  if (method === 'post' && !path.endsWith('}')) {
    created.set(path, data);
    // A document uploaded under a contact is also "a document" for /v1/documents/{id}.
    const alias = `/v1/${path.slice(path.lastIndexOf('/') + 1)}`;
    if (!created.has(alias)) created.set(alias, data);
  }
  if (path === '/v1/contacts') learned.contact = data.id;
  if (path === '/v1/opportunities') learned.opportunity = data.id;
  if (path === '/v1/products') learned.product = data.reference;
  if (path.startsWith('/v1/product-categories') && data.reference) learned.category = data.reference;
}

async function call({ method, path, op }: Operation, headers: Record<string, string> = {}) {
  const url = concretePath(path);
  const content = deref(op.requestBody)?.content ?? {};
  if (content['multipart/form-data'] || /multipart\/form-data/.test(op.description ?? '')) {
    const form = new FormData();
    form.append('file', new File(['contract test'], 'contract.txt', { type: 'text/plain' }));
    return { url, res: await tenant.request(method.toUpperCase(), url, { raw: form, headers }) };
  }
  const schema = content['application/json']?.schema;
  const body = schema ? sample(schema) : undefined;
  return { url, res: await tenant.request(method.toUpperCase(), url, body === undefined ? { headers } : { body, headers }) };
}

const hasParameter = (op: Json, ref: string) => (op.parameters ?? []).some((p: Json) => p.$ref === `#/components/parameters/${ref}`);

describe('contract: real responses match the OpenAPI document', () => {
  test('every operation answers with a documented status and a body matching its schema', async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    const operations: Operation[] = [];
    for (const [path, item] of Object.entries<Json>(doc.paths)) {
      for (const [method, op] of Object.entries<Json>(item)) operations.push({ method, path, op });
    }
    operations.sort((a, b) => orderOf(a) - orderOf(b));
    const problems: string[] = [];
    const seen: string[] = [];
    /** Checks one answer against the operation's documented statuses, body schemas and headers. */
    const check = (operation: Operation, url: string, res: ApiResponse, note = '') => {
      const label = `${operation.method.toUpperCase()} ${url}${note} → ${res.status}`;
      seen.push(res.status === 422 ? `${label} ${res.text.slice(0, 300)}` : label);
      const documented = deref(operation.op.responses[String(res.status)]);
      if (!documented) {
        problems.push(`${label}: status not documented (${res.text.slice(0, 200)})`);
        return;
      }
      const schema = documented.content?.['application/json']?.schema;
      if (schema && (res.headers.get('content-type') ?? '').includes('json')) {
        // Compiled with the document's components beside it, so `#/components/schemas/…` refs resolve.
        const validate = ajv.compile({ ...schema, components: { schemas: doc.components.schemas } });
        if (!validate(res.body)) problems.push(`${label}: ${ajv.errorsText(validate.errors)} in ${res.text.slice(0, 300)}`);
      }
      // The kit's headers (§22, §24) are on the answers the document says carry them (lists are read in page mode here).
      for (const header of ['ETag', 'Link']) {
        if (documented.headers?.[header] && !res.headers.get(header)) problems.push(`${label}: documented ${header} header missing`);
      }
      if (res.headers.get('etag') && !documented.headers?.ETag) problems.push(`${label}: ETag header not documented`);
    };
    for (const operation of operations) {
      // A stale If-Match is refused (412, documented) before the real call, which then still works.
      if (hasParameter(operation.op, 'IfMatch')) {
        const stale = await call(operation, { 'if-match': '"stale-contract-etag"' });
        check(operation, stale.url, stale.res, ' (stale If-Match)');
        if (stale.res.status < 300) problems.push(`${operation.method.toUpperCase()} ${stale.url}: a stale If-Match was not refused`);
      }
      const { url, res } = await call(operation);
      check(operation, url, res);
      if (res.status < 300) remember(operation, res.body);
      // A GET that gave an ETag gives a documented 304 to If-None-Match.
      const etag = res.headers.get('etag');
      if (operation.method === 'get' && res.status === 200 && etag) {
        const again = await tenant.request('GET', url, { headers: { 'if-none-match': etag } });
        check(operation, url, again, ' (If-None-Match)');
        if (again.status !== 304 || again.text !== '')
          problems.push(`GET ${url}: If-None-Match with the current ETag did not give an empty 304`);
      }
    }
    console.log(`contract: ${operations.length} operations\n${seen.join('\n')}`);
    expect(problems).toEqual([]);
    // The run did real work: the main creations succeeded and were read back.
    expect(created.get('/v1/contacts')).toBeDefined();
  }, 120_000);
});
