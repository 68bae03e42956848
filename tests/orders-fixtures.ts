import { expect } from 'bun:test';
import type { Stack, TestTenant } from '@crm/testing';
import { settledEventsOf } from './sales-feed.ts';

export const OWNER = 'ann@acme.test';

export interface OrderWorld {
  tenant: TestTenant;
  contactId: number;
  userId: number;
}

async function expectCreated(tenant: TestTenant, path: string, body: unknown) {
  const res = await tenant.request('POST', path, { body });
  if (res.status !== 201) throw new Error(`POST ${path} → ${res.status} ${res.text}`);
  return res.body.data;
}

/**
 * A fresh tenant with one user, one client contact "Acme Ltd", a product category and two
 * products: WIDGET (rates WIDGET-STD primary 1.50/0.10 and WIDGET-PRO 2.00/0.20) and
 * GADGET (one non-primary-flagged rate GADGET-1 3.00/19.99, primary by default).
 */
export async function orderWorld(stack: Stack): Promise<OrderWorld> {
  const tenant = await stack.createTenant({ users: [{ email: OWNER, name: 'Ann Lee' }] });
  const contact = await expectCreated(tenant, '/v1/contacts', { name: 'Acme Ltd', type: 'client', cif: 'B123' });
  await expectCreated(tenant, '/v1/product-categories', { name: 'Tools', reference: 'tools' });
  await createProduct(tenant, 'WIDGET', 'Widget', [
    { sku: 'WIDGET-PRO', cost: 2, price: 0.2 },
    { sku: 'WIDGET-STD', cost: 1.5, price: 0.1, primary: true },
  ]);
  await createProduct(tenant, 'GADGET', 'Gadget', [{ sku: 'GADGET-1', cost: 3, price: 19.99 }]);
  return { tenant, contactId: contact.id, userId: tenant.users[0]?.id as number };
}

/** Creates a catalog product in the tools category. */
export function createProduct(tenant: TestTenant, reference: string, name: string, rates: unknown[]) {
  return expectCreated(tenant, '/v1/products', { reference, name, vat: 21, product_category_ref: 'tools', rates });
}

/** A valid create body for the world's contact and user, with overrides. */
export function orderBody(overrides: Record<string, unknown> = {}) {
  return { enterprise_identifier: 'Acme Ltd', user_email: OWNER, date_limit: '2026-12-31', state: 1, ...overrides };
}

/** POST /v1/orders that must succeed; returns the order. */
export async function createOrder(tenant: TestTenant, overrides: Record<string, unknown> = {}) {
  const res = await tenant.request('POST', '/v1/orders', { body: orderBody(overrides) });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

/** The tenant's `order.*` events (type and data) as the feed lists them, once every earlier write's are listed. */
export async function orderEvents(tenant: TestTenant) {
  return (await settledEventsOf(tenant, 'order.')).map(({ type, data }) => ({ type, data }));
}

/** The stored rows of a tenant's orders (direct database check). */
export async function storedOrderCount(stack: Stack, tenantId: string): Promise<number> {
  const { rows } = await stack.sql<{ n: number }>('select count(*)::int as n from sales.orders where tenant_id = $1', [tenantId]);
  return rows[0]?.n ?? 0;
}
