/**
 * Turns an Elysia app's route table (its TypeBox schemas, which are JSON Schema) into OpenAPI
 * 3.1 path items, so the gateway can publish one document generated from the services' own
 * validation schemas. Only public `/v1` routes are described.
 */

type JsonSchema = Record<string, any>;

export interface DescribedRoute {
  method: string;
  path: string;
  hooks?: Record<string, any>;
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options']);

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

/** Drops what OpenAPI 3.1 tools misread: OAS 3.0 `nullable`, Elysia's coercion branches, TypeBox symbols. */
function cleanSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(cleanSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(collapseCoercion(schema as JsonSchema))) {
    if (key === 'nullable') continue;
    out[key] = cleanSchema(value);
  }
  return out;
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
      schema: cleanSchema(paramSchema?.properties?.[bare] ?? { type: 'string' }) as JsonSchema,
    });
  }
  const query = route.hooks?.query as JsonSchema | undefined;
  const required = new Set<string>(query?.required ?? []);
  for (const [name, schema] of Object.entries<JsonSchema>(query?.properties ?? {})) {
    const { description, ...rest } = schema;
    out.push({
      name,
      in: 'query',
      required: required.has(name),
      ...(description ? { description } : {}),
      schema: cleanSchema(rest) as JsonSchema,
    });
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

function responses(route: DescribedRoute): JsonSchema {
  const response = route.hooks?.response as JsonSchema | undefined;
  if (!response) return { 200: { description: 'Success' } };
  const byStatus: Record<string, JsonSchema> = isStatusMap(response) ? response : { 200: response };
  const out: JsonSchema = {};
  for (const [status, schema] of Object.entries(byStatus)) {
    out[status] = {
      description: Number(status) < 300 ? 'Success' : 'Error',
      content: { [mediaFor(schema)]: { schema: cleanSchema(schema) } },
    };
  }
  return out;
}

function requestBody(route: DescribedRoute): JsonSchema | undefined {
  const body = route.hooks?.body as JsonSchema | undefined;
  if (!body) return undefined;
  const type = route.hooks?.type;
  const multipart =
    type === 'multipart/form-data' ||
    type === 'formdata' ||
    Object.values<JsonSchema>(body.properties ?? {}).some((p) => p.format === 'binary');
  return { required: true, content: { [multipart ? 'multipart/form-data' : 'application/json']: { schema: cleanSchema(body) } } };
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
    const body = requestBody(route) ?? detail.requestBody;
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
