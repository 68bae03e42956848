// Where in a request body a hostile value can go: every field the schema describes, at every
// depth (array items as their first element), and a way to put a value there.
import { nonNullBranches, type Schema, stringFormat, typeOf } from './openapi.ts';

export type LeafKind = 'string' | 'date' | 'date-time' | 'integer' | 'number' | 'boolean' | 'array' | 'object' | 'free-object';
export type BodyPath = (string | number)[];

export interface Leaf {
  path: BodyPath;
  kind: LeafKind;
  schema: Schema;
}

/** Every location the schema describes (the root object included, as path `[]`). */
export function leavesOf(schema: Schema, path: BodyPath = [], depth = 0): Leaf[] {
  const s = nonNullBranches(schema)[0] ?? schema;
  const kind = kindOf(s);
  const here: Leaf = { path, kind, schema: s };
  if (depth > 6) return [here];
  if (kind === 'object') {
    const children = Object.entries<Schema>(s.properties ?? {}).flatMap(([key, child]) => leavesOf(child, [...path, key], depth + 1));
    return [here, ...children];
  }
  if (kind === 'array') return [here, ...leavesOf(s.items ?? {}, [...path, 0], depth + 1)];
  return [here];
}

function kindOf(s: Schema): LeafKind {
  const type = typeOf(s);
  const format = stringFormat(s);
  if (type === 'string' && (format === 'date' || format === 'date-time')) return format;
  if (type === 'object') return Object.keys(s.properties ?? {}).length === 0 ? 'free-object' : 'object';
  if (['string', 'integer', 'number', 'boolean', 'array'].includes(type)) return type as LeafKind;
  return 'string';
}

/** Human-readable path as the contract names fields: `rates[0].price`, `location.city`. */
export function fieldName(path: BodyPath): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('') || '(body)';
}

/**
 * A copy of `tree` with `value` at `path`; missing containers on the way are created (an
 * object for a key, a one-element array for an index), so a hostile value in `rates[0].sku`
 * lands even when the valid body had no rates.
 */
export function setAt(tree: unknown, path: BodyPath, value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path as [string | number, ...BodyPath];
  if (typeof head === 'number') {
    const list = Array.isArray(tree) ? [...tree] : [];
    list[Math.min(head, list.length)] = setAt(list[head], rest, value);
    return list;
  }
  const record = tree && typeof tree === 'object' && !Array.isArray(tree) ? { ...(tree as object) } : {};
  return { ...record, [head]: setAt((record as Record<string, unknown>)[head], rest, value) };
}
