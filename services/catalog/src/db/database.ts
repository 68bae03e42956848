import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
/** pg returns numeric columns as strings; we write numbers. */
type Numeric = ColumnType<string, number, number>;

export interface VatRatesTable {
  id: Generated<number>;
  tenant_id: string;
  percentage: Numeric;
  created_at: Timestamp;
}

export interface ProductCategoriesTable {
  id: Generated<number>;
  tenant_id: string;
  name: string;
  reference: string;
  parent_id: number | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ProductsTable {
  id: Generated<number>;
  tenant_id: string;
  reference: string;
  name: string;
  description: string | null;
  vat_id: number;
  product_category_id: number;
  services: string | null;
  stock: ColumnType<string | null, number | null, number | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ProductRatesTable {
  id: Generated<number>;
  tenant_id: string;
  product_id: number;
  position: number;
  sku: string;
  cost: Numeric;
  price: Numeric;
  is_primary: boolean;
}

/** Tables of the catalog schema. */
export interface CatalogDatabase {
  vat_rates: VatRatesTable;
  product_categories: ProductCategoriesTable;
  products: ProductsTable;
  product_rates: ProductRatesTable;
}
