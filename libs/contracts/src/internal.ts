import { type Static, Type } from '@sinclair/typebox';

/**
 * Schemas of the small /internal APIs services call on each other. Every call carries the
 * internal credential, `x-tenant-id` and `x-request-id` headers.
 */

/** An account user as sales stores it. */
export const AccountUser = Type.Object(
  { id: Type.Integer(), name: Type.String(), email: Type.String() },
  { title: 'AccountUser', examples: [{ id: 1, name: 'Demo User', email: 'demo@example.com' }] },
);
export type AccountUser = Static<typeof AccountUser>;

/** POST /internal/users (sales): create or update an account user of the tenant by e-mail. */
export const UpsertUserRequest = Type.Object({
  email: Type.String({ format: 'email' }),
  name: Type.String({ minLength: 1, maxLength: 255 }),
});
export type UpsertUserRequest = Static<typeof UpsertUserRequest>;

/** GET /internal/contacts/resolve?identifier=… (sales) → 200 { data: { id } } or 404. */
export const ResolvedContact = Type.Object({ data: Type.Object({ id: Type.Integer() }) });
export type ResolvedContact = Static<typeof ResolvedContact>;

/** GET /internal/opportunities/:id (sales) → 200 { data: { id } } or 404. */
export const ExistingOpportunity = Type.Object({ data: Type.Object({ id: Type.Integer() }) });

/** GET /internal/users/by-email?email=… (sales) → 200 { data: AccountUser } or 404. */
export const UserByEmail = Type.Object({ data: AccountUser });

/** A product rate as the catalog returns it internally. */
export const InternalRate = Type.Object({
  id: Type.Integer(),
  sku: Type.String(),
  cost: Type.Number(),
  price: Type.Number(),
  primary: Type.Boolean(),
});

/** POST /internal/products/lookup (catalog) { references: string[] } → { data: InternalProduct[] } (unknown references are absent). */
export const ProductsLookupRequest = Type.Object({ references: Type.Array(Type.String(), { maxItems: 500 }) });
export const InternalProduct = Type.Object({
  id: Type.Integer(),
  reference: Type.String(),
  name: Type.String(),
  rates: Type.Array(InternalRate),
});
export type InternalProduct = Static<typeof InternalProduct>;
export const ProductsLookupResponse = Type.Object({ data: Type.Array(InternalProduct) });
export type ProductsLookupResponse = Static<typeof ProductsLookupResponse>;
