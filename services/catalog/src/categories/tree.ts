import type { ProductCategory, ProductCategoryTree } from '@crm/contracts';
import type { CategoryRow } from './repo.ts';

/** The API shape of a category row, without children. */
export function presentProductCategory(row: CategoryRow): ProductCategory {
  return {
    id: row.id,
    name: row.name,
    reference: row.reference,
    parent_id: row.parent_id,
    has_products: row.has_products,
    has_objectives: false,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/**
 * Assembles flat rows (the roots and all their descendants) into trees, in memory, in
 * O(rows); returns the trees of `rootIds` in that order (ids without a row are skipped).
 */
export function presentProductCategoryTrees(rows: CategoryRow[], rootIds: number[]): ProductCategoryTree[] {
  const nodes = new Map<number, ProductCategoryTree>();
  for (const row of rows) nodes.set(row.id, { ...presentProductCategory(row), children: [] });
  for (const row of rows) {
    if (row.parent_id === null) continue;
    nodes.get(row.parent_id)?.children.push(nodes.get(row.id) as ProductCategoryTree);
  }
  return rootIds.flatMap((id) => nodes.get(id) ?? []);
}
