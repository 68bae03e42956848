type Json = Record<string, any>;

const COMPONENT = '#/components/schemas/';
/** Keys whose values are data (examples, enums, defaults), never schemas to hoist. */
const VALUES = new Set(['example', 'examples', 'enum', 'const', 'default']);

/** The component name of a schema: its `title` (`Contact`, `ContactCreate`…) or the `$id` of a recursive one. */
export function schemaName(schema: Json): string | undefined {
  const name = schema.$id ?? schema.title;
  return typeof name === 'string' && /^[A-Za-z][A-Za-z0-9_]*$/.test(name) ? name : undefined;
}

/**
 * The services describe each named schema inline wherever it is used (TypeBox recursive schemas
 * also refer to themselves by their bare `$id`). OpenAPI wants each once under components: move
 * every named schema there, point every use (and every bare reference) at it, and return the
 * names that were described differently by two uses (a naming mistake, or services of two
 * versions during a rollout); the first description wins.
 */
export function hoistNamedSchemas(root: Json, schemas: Json): string[] {
  const conflicts = new Set<string>();
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (node === null || typeof node !== 'object') return node;
    const { $id: _id, ...rest } = node as Json;
    const out: Json = {};
    for (const [key, value] of Object.entries(rest)) {
      if (VALUES.has(key)) out[key] = value;
      else if (key === '$ref' && typeof value === 'string' && !value.includes('#') && !value.includes('/')) out[key] = COMPONENT + value;
      else out[key] = visit(value);
    }
    const name = schemaName(node as Json);
    if (!name) return out;
    if (!schemas[name]) schemas[name] = out;
    else if (JSON.stringify(schemas[name]) !== JSON.stringify(out)) conflicts.add(name);
    return { $ref: COMPONENT + name };
  };
  for (const key of Object.keys(root)) root[key] = visit(root[key]);
  return [...conflicts];
}
