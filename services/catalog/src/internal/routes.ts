import { type InternalProduct, ProductsLookupRequest, ProductsLookupResponse } from '@crm/contracts';
import { jsonBody, requestContext } from '@crm/http';
import { Type } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import type { Kysely } from 'kysely';
import type { CatalogDatabase } from '../db/database.ts';
import { ratesByProduct } from '../products/present.ts';
import { findProductsByReferences, findRates } from '../products/repo.ts';

/** Products of the tenant with these references, with their rates; unknown references are absent. */
export async function lookupProducts(db: Kysely<CatalogDatabase>, tenantId: string, references: string[]): Promise<InternalProduct[]> {
  const rows = await findProductsByReferences(db, tenantId, [...new Set(references)]);
  const rates = ratesByProduct(
    await findRates(
      db,
      rows.map((r) => r.id),
    ),
  );
  return rows.map((row) => ({ id: row.id, reference: row.reference, name: row.name, rates: rates.get(row.id) ?? [] }));
}

/** The lookup body of the shared contract, with unknown fields refused explicitly (contract §19). */
const LookupBody = Type.Object(ProductsLookupRequest.properties, { additionalProperties: false });

/** The internal API other services call (never exposed by the gateway). */
export function internalRoutes(db: Kysely<CatalogDatabase>) {
  return new Elysia({ name: 'catalog-internal' })
    .use(requestContext)
    .post('/internal/products/lookup', async ({ body, tenantId }) => ({ data: await lookupProducts(db, tenantId, body.references) }), {
      ...jsonBody(LookupBody),
      response: { 200: ProductsLookupResponse },
    });
}
