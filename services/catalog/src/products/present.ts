import type { Product, ProductCategory, Rate } from '@crm/contracts';
import type { Kysely } from 'kysely';
import { findCategoriesByIds } from '../categories/repo.ts';
import { presentProductCategory } from '../categories/tree.ts';
import type { CatalogDatabase } from '../db/database.ts';
import { findRates, type ProductRow, type ProductWithParts, type RateRow } from './repo.ts';

/** The API shape of a rate row. */
export function presentRate(row: RateRow): Rate {
  return { id: row.id, sku: row.sku, cost: Number(row.cost), price: Number(row.price), primary: row.is_primary };
}

/** Groups rate rows by product id, keeping their order. */
export function ratesByProduct(rows: RateRow[]): Map<number, Rate[]> {
  const grouped = new Map<number, Rate[]>();
  for (const row of rows) {
    const list = grouped.get(row.product_id) ?? [];
    list.push(presentRate(row));
    grouped.set(row.product_id, list);
  }
  return grouped;
}

/** The API shape of a product row, given its rates and its category. */
function presentProduct(row: ProductRow, rates: Rate[], category: ProductCategory | undefined): Product {
  return {
    id: row.id,
    reference: row.reference,
    name: row.name,
    description: row.description,
    vat_id: row.vat_id,
    product_category_id: row.product_category_id,
    services: row.services,
    stock: row.stock === null ? null : Number(row.stock),
    rates,
    category: category as Product['category'],
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** Turns product rows into API products, loading their rates and categories in two queries. */
export async function presentProducts(db: Kysely<CatalogDatabase>, tenantId: string, rows: ProductRow[]): Promise<Product[]> {
  if (rows.length === 0) return [];
  const [rates, categories] = await Promise.all([
    findRates(
      db,
      rows.map((r) => r.id),
    ),
    findCategoriesByIds(db, tenantId, [...new Set(rows.map((r) => r.product_category_id))]),
  ]);
  const rateMap = ratesByProduct(rates);
  const categoryMap = new Map(categories.map((c) => [c.id, presentProductCategory(c)]));
  return rows.map((row) => presentProduct(row, rateMap.get(row.id) ?? [], categoryMap.get(row.product_category_id)));
}

/** The API product of a row read with its rates and category (`findProductWithParts`): no further query. */
export function presentProductWithParts(row: ProductWithParts): Product {
  const category =
    row.category_name === null
      ? undefined
      : presentProductCategory({
          id: row.product_category_id,
          name: row.category_name,
          reference: row.category_reference as string,
          parent_id: row.category_parent_id,
          // The category holds at least this product.
          has_products: true,
          created_at: row.category_created_at as Date,
          updated_at: row.category_updated_at as Date,
        });
  return presentProduct(row, row.rates.map(presentRate), category);
}
