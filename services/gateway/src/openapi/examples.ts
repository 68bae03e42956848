/**
 * Examples of the document: every request body and every 2xx answer gets one, so Swagger UI's
 * "Try it out" starts from a body the API accepts and generated clients show real values. They
 * come from the schemas' own `examples` (written next to the TypeBox schemas); a schema without
 * one (a `{ data, pagination }` wrapper) gets one composed from the examples of its parts.
 */
type Json = Record<string, any>;

const COMPONENT = '#/components/schemas/';
/** Deeper than this a composed example stops (recursive schemas carry their own examples anyway). */
const MAX_DEPTH = 12;

/** Values for a string format when nothing more specific is given. */
const FORMAT_EXAMPLES: Record<string, string> = {
  'date-time': '2026-11-20T09:30:00.000Z',
  date: '2026-12-31',
  email: 'ann@example.com',
  uuid: '0b9f8f3e-3c7e-4f57-9a57-5d0c1f0e7a11',
  uri: 'https://example.com/',
};

function componentOf(ref: string, schemas: Json): Json | undefined {
  return ref.startsWith(COMPONENT) ? schemas[ref.slice(COMPONENT.length)] : undefined;
}

/**
 * An example of a schema: its own `examples[0]` (or `example`, `const`, first `enum` member,
 * `default`), else one composed from its parts: an object's required properties, one item of an
 * array, the first non-null member of a union, a plausible scalar of its type and bounds.
 */
export function exampleOf(schema: Json | undefined, schemas: Json, depth = 0): unknown {
  if (!schema || depth > MAX_DEPTH) return undefined;
  if (typeof schema.$ref === 'string') return exampleOf(componentOf(schema.$ref, schemas), schemas, depth + 1);
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.example !== undefined) return schema.example;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  const members = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(members)) {
    const member = members.find((m: Json) => m.type !== 'null') ?? members[0];
    return exampleOf(member, schemas, depth + 1);
  }
  if (Array.isArray(schema.allOf)) return Object.assign({}, ...schema.allOf.map((part: Json) => exampleOf(part, schemas, depth + 1)));
  switch (Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type) {
    case 'object': {
      const out: Json = {};
      for (const key of schema.required ?? []) {
        const value = exampleOf(schema.properties?.[key], schemas, depth + 1);
        if (value !== undefined) out[key] = value;
      }
      return out;
    }
    case 'array': {
      const item = exampleOf(schema.items, schemas, depth + 1);
      return item === undefined ? [] : Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => item);
    }
    case 'integer':
    case 'number':
      return schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 1);
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'string':
      return FORMAT_EXAMPLES[schema.format] ?? 'text'.padEnd(schema.minLength ?? 0, 'x');
    default:
      return undefined;
  }
}

/**
 * Gives a media type (of a request body or a 2xx answer) its example: a schema named in
 * components gets a named example in `components.examples` (shared by every operation using
 * it); an inline schema an inline `example`. A media type that already has one keeps it.
 */
function exemplify(media: Json, components: Json): void {
  if (!media?.schema || media.example !== undefined || media.examples !== undefined) return;
  // Bytes (a download, an uploaded file) have no meaningful example.
  if (media.schema.format === 'binary') return;
  const ref: unknown = media.schema.$ref;
  const name = typeof ref === 'string' && ref.startsWith(COMPONENT) ? ref.slice(COMPONENT.length) : undefined;
  const value = exampleOf(media.schema, components.schemas);
  if (value === undefined) return;
  if (!name) {
    media.example = value;
    return;
  }
  components.examples ??= {};
  components.examples[name] ??= { value };
  media.examples = { [name]: { $ref: `#/components/examples/${name}` } };
}

/**
 * Every request body and 2xx answer of the operations (paths and webhooks) gets an example.
 * The named schemas' own examples are then only in `components.examples` (once, not twice).
 */
export function attachExamples(pathItems: Json[], components: Json): void {
  for (const item of pathItems) {
    for (const operation of Object.values<Json>(item)) {
      for (const media of Object.values<Json>(operation.requestBody?.content ?? {})) exemplify(media, components);
      for (const [status, response] of Object.entries<Json>(operation.responses ?? {})) {
        if (!status.startsWith('2')) continue;
        for (const media of Object.values<Json>(response.content ?? {})) exemplify(media, components);
      }
    }
  }
  for (const schema of Object.values<Json>(components.schemas)) delete schema.examples;
}
