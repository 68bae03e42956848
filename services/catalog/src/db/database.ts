/** Tables of the catalog schema (feature tables are added by their migrations). */
export type CatalogDatabase = {};
