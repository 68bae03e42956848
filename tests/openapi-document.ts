// What the OpenAPI tests share: the served document, `$ref` resolution inside it, and an ajv
// (JSON Schema 2020-12, the dialect of OpenAPI 3.1) that checks values against its schemas with
// the formats the API enforces.
import { isDate, isDateTime } from '@crm/http';
import Ajv2020 from 'ajv/dist/2020.js';
import { parse } from 'yaml';

export type Json = Record<string, any>;

/** The document the gateway serves at /openapi/v1.yaml, parsed. */
export async function servedDocument(gatewayUrl: string): Promise<Json> {
  const response = await fetch(`${gatewayUrl}/openapi/v1.yaml`);
  if (response.status !== 200) throw new Error(`GET /openapi/v1.yaml → ${response.status}`);
  return parse(await response.text());
}

/** Follows local `$ref`s (`#/components/...`) inside the document. */
export function deref<T = Json>(doc: Json, node: T): T {
  const ref = (node as Json)?.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return node;
  return deref(
    doc,
    ref
      .slice(2)
      .split('/')
      .map((key) => key.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((at: Json, key) => at?.[key], doc) as T,
  );
}

/** Checks values against schemas of the document; `#/components/schemas/…` references resolve. */
export function documentValidator(doc: Json) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addFormat('date', isDate);
  ajv.addFormat('date-time', isDateTime);
  ajv.addFormat('email', /^[^\s@]+@[^\s@]+\.[^\s@]+$/);
  ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
  ajv.addFormat('uri', /^[a-z][a-z0-9+.-]*:/i);
  ajv.addFormat('binary', () => true);
  const compiled = new Map<string, ReturnType<typeof ajv.compile>>();
  return {
    /** Problems of `value` against `schema` (empty when it conforms). */
    problems(schema: Json, value: unknown): string[] {
      const key = JSON.stringify(schema);
      let validate = compiled.get(key);
      if (!validate) {
        validate = ajv.compile({ ...schema, components: { schemas: doc.components.schemas } });
        compiled.set(key, validate);
      }
      if (validate(value)) return [];
      return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`);
    },
  };
}

/** Every operation of the document's `paths` (and, with `webhooks`, of its webhooks section). */
export function operationsOf(doc: Json, section: 'paths' | 'webhooks' = 'paths') {
  return Object.entries<Json>(doc[section] ?? {}).flatMap(([path, item]) =>
    Object.entries<Json>(item).map(([method, op]) => ({ path, method, op })),
  );
}

/** The example of a media type: its `example`, or the value of its first (dereferenced) `examples` entry. */
export function mediaExample(doc: Json, media: Json): unknown {
  if (media.example !== undefined) return media.example;
  const first = Object.values<Json>(media.examples ?? {})[0];
  return first === undefined ? undefined : deref(doc, first).value;
}
