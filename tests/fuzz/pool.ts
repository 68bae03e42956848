// The real resources of the fuzz tenant, so generated paths and body references can point at
// things that exist (and not only at garbage). Generated cases hold `PoolRef`s; they are
// resolved against the pool when the case runs, because earlier cases create and delete.

type Resource = Record<string, any>;

/** A reference to "the n-th known resource of a collection", resolved at run time. */
export class PoolRef {
  constructor(
    readonly collection: string,
    readonly field: 'id' | 'reference' | 'email' | 'sku' | 'name',
    readonly pick: number,
    readonly as: 'string' | 'number' = 'string',
  ) {}
}

/** What a reference resolves to when the pool has nothing: surely not found. */
const MISSING = { string: 'fuzz-missing', number: 2147480000 };

/** Known resources per collection (`contacts`, `orders`, `product-categories`, …), newest last. */
export class ResourcePool {
  private readonly byCollection = new Map<string, Resource[]>();

  /** Remembers a resource of a collection (at most 30 per collection, oldest dropped). */
  add(collection: string, resource: Resource): void {
    if (!resource || typeof resource !== 'object' || resource.id === undefined) return;
    const list = (this.byCollection.get(collection) ?? []).filter((r) => String(r.id) !== String(resource.id));
    list.push(resource);
    this.byCollection.set(collection, list.slice(-30));
  }

  /** Forgets the resource a path value named (by id, reference, e-mail or name). */
  remove(collection: string, key: string): void {
    const list = this.byCollection.get(collection) ?? [];
    this.byCollection.set(
      collection,
      list.filter((r) => ![r.id, r.reference, r.email, r.name].some((v) => v !== undefined && v !== null && String(v) === key)),
    );
  }

  /** Whether a reference points at a known resource that has the referenced field. */
  has(ref: PoolRef): boolean {
    const list = this.byCollection.get(ref.collection) ?? [];
    const resource = list[ref.pick % Math.max(list.length, 1)];
    const value = resource ? fieldOf(resource, ref.field) : undefined;
    return value !== undefined && value !== null;
  }

  /** The value a reference points at now, or a surely-missing value when the pool is empty. */
  resolve(ref: PoolRef): string | number {
    const list = this.byCollection.get(ref.collection) ?? [];
    const resource = list[ref.pick % Math.max(list.length, 1)];
    const value = resource ? fieldOf(resource, ref.field) : undefined;
    if (value === undefined || value === null) return MISSING[ref.as];
    return ref.as === 'number' ? Number(value) : String(value);
  }
}

function fieldOf(resource: Resource, field: PoolRef['field']): unknown {
  if (field === 'sku') return resource.rates?.[0]?.sku;
  return resource[field];
}

/** A copy of a generated value with every `PoolRef` inside replaced by its current value. */
export function resolveRefs(value: unknown, pool: ResourcePool): unknown {
  if (value instanceof PoolRef) return pool.resolve(value);
  if (Array.isArray(value)) return value.map((v) => resolveRefs(v, pool));
  if (isPlainObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveRefs(v, pool)]));
  }
  return value;
}

/** An object literal or JSON object (fast-check builds records without a prototype). */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (!value || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** The collection a path parameter points into: the segment before it (`/orders/{reference}` → `orders`). */
export function collectionOfParam(path: string, param: string): string {
  if (param === 'document') return 'documents';
  const segments = path.split('/');
  const at = segments.indexOf(`{${param}}`);
  return segments[at - 1] ?? param;
}

/** The collection a successful POST on `path` creates into (uploads create documents). */
export function collectionCreatedBy(path: string): string | undefined {
  const segments = path.split('/').filter((s) => s && s !== 'v1' && s !== 'batch' && s !== 'upsert');
  const last = segments.at(-1);
  if (!last || last.startsWith('{')) return undefined;
  if (['test', 'retry', 'rotate-secret'].includes(last)) return undefined;
  return last;
}
