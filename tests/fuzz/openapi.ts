// Reads the OpenAPI document the running gateway serves and turns it into the list of
// operations the fuzz drives: method, path, path and query parameters, and the request body
// schema (JSON or multipart), with every local `$ref` followed.
import { parse } from 'yaml';

export type Schema = Record<string, any>;

export interface Param {
  name: string;
  schema: Schema;
  required: boolean;
}

export interface Operation {
  /** `POST /v1/contacts`: how the report names the operation. */
  name: string;
  method: string;
  path: string;
  pathParams: Param[];
  queryParams: Param[];
  body?: { kind: 'json' | 'multipart'; schema: Schema };
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** Fetches `/openapi/v1.yaml` from the gateway and lists every operation it describes. */
export async function loadOperations(gatewayUrl: string): Promise<Operation[]> {
  const response = await fetch(`${gatewayUrl}/openapi/v1.yaml`);
  if (response.status !== 200) throw new Error(`GET /openapi/v1.yaml answered ${response.status}`);
  return operationsOf(parse(await response.text()));
}

/** The operations of a parsed OpenAPI document, sorted by path then method. */
export function operationsOf(doc: Schema): Operation[] {
  const resolve = (node: unknown) => resolveRefs(doc, node, 0);
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<Schema>(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const params: Schema[] = [...(item.parameters ?? []), ...(op.parameters ?? [])].map(resolve);
      const paramsIn = (where: string): Param[] =>
        params
          .filter((p) => p.in === where)
          .map((p) => ({ name: p.name, schema: p.schema ?? { type: 'string' }, required: p.required === true || where === 'path' }));
      operations.push({
        name: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        pathParams: paramsIn('path'),
        queryParams: paramsIn('query'),
        body: bodyOf(resolve(op.requestBody)),
      });
    }
  }
  return operations;
}

function bodyOf(requestBody: Schema | undefined): Operation['body'] {
  const content = requestBody?.content ?? {};
  if (content['application/json']) return { kind: 'json', schema: content['application/json'].schema ?? {} };
  if (content['multipart/form-data']) return { kind: 'multipart', schema: content['multipart/form-data'].schema ?? {} };
  return undefined;
}

/** A copy of `node` with every local `$ref` replaced by its target (recursive refs stop at depth 12). */
function resolveRefs(doc: Schema, node: unknown, depth: number): any {
  if (Array.isArray(node)) return node.map((n) => resolveRefs(doc, n, depth));
  if (!node || typeof node !== 'object') return node;
  const ref = (node as Schema).$ref;
  if (typeof ref === 'string' && ref.startsWith('#/')) {
    if (depth > 12) return {};
    const target = ref
      .slice(2)
      .split('/')
      .reduce((at: any, key) => at?.[key.replaceAll('~1', '/').replaceAll('~0', '~')], doc);
    return resolveRefs(doc, target, depth + 1);
  }
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, resolveRefs(doc, v, depth)]));
}

/** The schema alternatives of `schema` that are not `null` (an `anyOf` of a type and null). */
export function nonNullBranches(schema: Schema): Schema[] {
  const branches: Schema[] = schema.anyOf ?? schema.oneOf ?? [schema];
  return branches.filter((b) => b.type !== 'null');
}

/** Whether `schema` accepts `null` (an `anyOf`/`oneOf` branch, `nullable`, or a type list). */
export function acceptsNull(schema: Schema): boolean {
  const branches: Schema[] = schema.anyOf ?? schema.oneOf ?? [];
  return (
    schema.nullable === true || branches.some((b) => b.type === 'null') || (Array.isArray(schema.type) && schema.type.includes('null'))
  );
}

/** The main type of a (non-null branch of a) schema: `string`, `integer`, `object`, … */
export function typeOf(schema: Schema): string {
  const branch = nonNullBranches(schema)[0] ?? schema;
  if (Array.isArray(branch.type)) return branch.type.find((t: string) => t !== 'null') ?? 'string';
  if (branch.type) return branch.type;
  if (branch.const !== undefined) return typeof branch.const === 'number' ? 'number' : typeof branch.const;
  if (branch.properties) return 'object';
  return 'unknown';
}

/** The format of a string schema, recognising a date written as a pattern (`^\d{4}-\d{2}-\d{2}$`) too. */
export function stringFormat(schema: Schema): string | undefined {
  if (schema.format) return schema.format;
  const pattern = String(schema.pattern ?? '');
  if (pattern.includes('\\d{4}-\\d{2}-\\d{2}') || /YYYY-MM-DD/.test(schema.description ?? ''))
    return pattern.includes('T') ? 'date-time' : 'date';
  return undefined;
}
