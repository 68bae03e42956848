type Json = Record<string, any>;

const COMPONENT = '#/components/schemas/';

/**
 * TypeBox recursive schemas carry `$id` and refer to themselves by that bare id, once per
 * operation that uses them. OpenAPI wants each named schema once under components: move every
 * `$id` schema there and point all bare references (and the former places) at it.
 */
export function hoistNamedSchemas(root: Json, schemas: Json): void {
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (node === null || typeof node !== 'object') return node;
    const { $id, ...rest } = node as Json;
    const out: Json = {};
    for (const [key, value] of Object.entries(rest)) {
      out[key] =
        key === '$ref' && typeof value === 'string' && !value.includes('#') && !value.includes('/') ? COMPONENT + value : visit(value);
    }
    if (typeof $id !== 'string') return out;
    schemas[$id] ??= out;
    return { $ref: COMPONENT + $id };
  };
  for (const key of Object.keys(root)) root[key] = visit(root[key]);
}
