/**
 * Turns an Elysia app's route table (its TypeBox schemas, which are JSON Schema) into OpenAPI
 * 3.1 path items, so the gateway can publish one document generated from the services' own
 * validation schemas. Only public `/v1` routes are described. A schema with a `title` (or the
 * `$id` of a recursive one) is a named component: the gateway hoists it into
 * `components.schemas`; its `examples[0]` becomes the example of every body and answer using it.
 */

type JsonSchema = Record<string, any>;

export interface DescribedRoute {
  method: string;
  path: string;
  hooks?: Record<string, any>;
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options']);

/** Keywords whose value is one schema. */
const SCHEMA_KEYWORDS = new Set([
  'items',
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contentSchema',
]);
/** Keywords whose value is a list of schemas. */
const SCHEMA_LIST_KEYWORDS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
/** Keywords whose value maps names to schemas. */
const SCHEMA_MAP_KEYWORDS = new Set(['properties', 'patternProperties', '$defs', 'dependentSchemas']);
/** Keywords kept as they are (JSON Schema 2020-12 and the OpenAPI 3.1 additions). */
const VALUE_KEYWORDS = new Set([
  'type',
  'enum',
  'const',
  'multipleOf',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'maxContains',
  'minContains',
  'maxProperties',
  'minProperties',
  'required',
  'dependentRequired',
  'format',
  'contentEncoding',
  'contentMediaType',
  'title',
  'description',
  'default',
  'deprecated',
  'readOnly',
  'writeOnly',
  'examples',
  '$ref',
  '$id',
  '$anchor',
  '$comment',
  'discriminator',
  'xml',
  'externalDocs',
]);

/** Elysia coerces numbers through `anyOf [string with format integer|numeric, number]`: keep the number. */
function collapseCoercion(schema: JsonSchema): JsonSchema {
  const branches = schema.anyOf;
  if (!Array.isArray(branches) || branches.length !== 2) return schema;
  const numeric = branches.find((b: JsonSchema) => b.type === 'integer' || b.type === 'number');
  const coercion = branches.find((b: JsonSchema) => b.type === 'string' && (b.format === 'integer' || b.format === 'numeric'));
  if (!numeric || !coercion) return schema;
  const { anyOf: _ignored, ...rest } = schema;
  return { ...rest, ...numeric };
}

/** A union of literals of one type (`'open' | 'won' | 'lost'`) reads better as an `enum`. */
function collapseLiterals(schema: JsonSchema): JsonSchema {
  const branches = schema.anyOf;
  if (!Array.isArray(branches) || branches.length < 2) return schema;
  const literal = (b: JsonSchema) => b.const !== undefined && Object.keys(b).every((k) => k === 'const' || k === 'type');
  const types = new Set(branches.map((b: JsonSchema) => b.type));
  if (!branches.every(literal) || types.size !== 1 || [...types][0] === undefined) return schema;
  const { anyOf: _ignored, ...rest } = schema;
  return { type: [...types][0], enum: branches.map((b: JsonSchema) => b.const), ...rest };
}

/**
 * A schema as OpenAPI 3.1 tools read it: only JSON Schema keywords (OAS 3.0 `nullable`, the
 * kit's message and size keywords and TypeBox symbols dropped; `x-` extensions kept), Elysia's
 * coercion unions collapsed to the number, unions of literals as enums. Walks the schema by
 * keyword, so a property named like a keyword is kept and example values are never touched.
 */
export function describeSchema(schema: unknown): JsonSchema {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema as JsonSchema;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(collapseLiterals(collapseCoercion(schema as JsonSchema)))) {
    if (SCHEMA_KEYWORDS.has(key)) out[key] = typeof value === 'object' ? describeSchema(value) : value;
    else if (SCHEMA_LIST_KEYWORDS.has(key)) out[key] = (value as unknown[]).map(describeSchema);
    else if (SCHEMA_MAP_KEYWORDS.has(key))
      out[key] = Object.fromEntries(Object.entries(value as JsonSchema).map(([name, s]) => [name, describeSchema(s)]));
    else if (VALUE_KEYWORDS.has(key) || key.startsWith('x-')) out[key] = value;
  }
  return out;
}

/** A parameter's description goes on the parameter; a named schema (a component) keeps its own. */
function describedParameter(schema: JsonSchema): JsonSchema {
  const { description, ...rest } = schema;
  if (!description) return { schema };
  return { description, schema: schema.title || schema.$id ? schema : rest };
}

function parameters(route: DescribedRoute): JsonSchema[] {
  const out: JsonSchema[] = [];
  const paramSchema = route.hooks?.params as JsonSchema | undefined;
  for (const name of route.path.match(/:[^/]+/g) ?? []) {
    const bare = name.slice(1);
    out.push({
      name: bare,
      in: 'path',
      required: true,
      ...describedParameter(describeSchema(paramSchema?.properties?.[bare] ?? { type: 'string' })),
    });
  }
  const query = route.hooks?.query as JsonSchema | undefined;
  const required = new Set<string>(query?.required ?? []);
  for (const [name, property] of Object.entries<JsonSchema>(query?.properties ?? {})) {
    out.push({ name, in: 'query', required: required.has(name), ...describedParameter(describeSchema(property)) });
  }
  return out;
}

function isStatusMap(response: JsonSchema): boolean {
  const keys = Object.keys(response);
  return keys.length > 0 && keys.every((k) => /^\d{3}$/.test(k));
}

function mediaFor(schema: JsonSchema): string {
  return schema.type === 'string' && schema.format !== 'binary' ? 'text/plain' : 'application/json';
}

const describeStatus = (status: string) => (Number(status) < 300 ? 'Success' : 'Error');

/**
 * The answers of a route: its `response` schemas by status, and what `detail.responses`
 * describes by hand (a route that streams bytes rather than JSON, e.g. a download).
 */
function responses(route: DescribedRoute): JsonSchema {
  const response = route.hooks?.response as JsonSchema | undefined;
  const byHand = (route.hooks?.detail?.responses ?? {}) as JsonSchema;
  const byStatus: Record<string, JsonSchema> = !response ? {} : isStatusMap(response) ? response : { 200: response };
  const out: JsonSchema = {};
  for (const [status, schema] of Object.entries(byStatus)) {
    out[status] = { description: describeStatus(status), content: { [mediaFor(schema)]: { schema: describeSchema(schema) } } };
  }
  for (const [status, described] of Object.entries(byHand)) out[status] = { description: describeStatus(status), ...described };
  return Object.keys(out).length > 0 ? out : { 200: { description: 'Success' } };
}

function requestBody(route: DescribedRoute): JsonSchema | undefined {
  const body = route.hooks?.body as JsonSchema | undefined;
  if (!body) return undefined;
  const type = route.hooks?.type;
  const multipart =
    type === 'multipart/form-data' ||
    type === 'formdata' ||
    Object.values<JsonSchema>(body.properties ?? {}).some((p) => p.format === 'binary');
  return { required: true, content: { [multipart ? 'multipart/form-data' : 'application/json']: { schema: describeSchema(body) } } };
}

/** A request body described by hand (`detail.requestBody`, e.g. a streamed multipart upload), its schemas cleaned. */
function describedRequestBody(body: JsonSchema | undefined): JsonSchema | undefined {
  if (!body) return undefined;
  const content: JsonSchema = {};
  for (const [type, media] of Object.entries<JsonSchema>(body.content ?? {}))
    content[type] = { ...media, schema: describeSchema(media.schema) };
  return { ...body, content };
}

/** `/v1/contacts/:identifier` → `/v1/contacts/{identifier}`. */
export function openApiPath(path: string): string {
  return path.replace(/:([^/]+)/g, '{$1}');
}

function operationId(method: string, path: string): string {
  const words = path
    .replace(/^\/v1\//, '')
    .split(/[/{}:-]+/)
    .filter(Boolean);
  return [method.toLowerCase(), ...words.map((w) => w[0]?.toUpperCase() + w.slice(1))].join('');
}

/** OpenAPI 3.1 `paths` for every public (`/v1`) route of an Elysia route table. */
export function describeRoutes(routes: DescribedRoute[]): Record<string, Record<string, JsonSchema>> {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const method = route.method.toLowerCase();
    if (!METHODS.has(method) || !route.path.startsWith('/v1/') || route.path.includes('*')) continue;
    const detail = (route.hooks?.detail ?? {}) as JsonSchema;
    const path = openApiPath(route.path);
    // A route that parses its body by hand (e.g. streamed multipart) may describe it in `detail.requestBody`.
    const body = requestBody(route) ?? describedRequestBody(detail.requestBody);
    paths[path] ??= {};
    paths[path][method] = {
      operationId: operationId(method, route.path),
      ...(detail.summary ? { summary: detail.summary } : {}),
      ...(detail.description ? { description: detail.description } : {}),
      ...(detail.tags ? { tags: detail.tags } : {}),
      parameters: parameters(route),
      ...(body ? { requestBody: body } : {}),
      responses: responses(route),
    };
  }
  return paths;
}
