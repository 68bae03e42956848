// The unfiltered contact total of page mode (contract §4) comes from maintained partial counts
// (sales migration 0032), not from counting rows: these tests hold it to `count(*)` after every
// kind of write — API creates, batch creates, upserts, deletes, concurrent writers, SQL bulk
// writes, TRUNCATE (a move to another tenant is refused) — and check the migration counts rows that existed before it.
import { beforeAll, describe, expect, test } from 'bun:test';
import { createDb, migrate } from '@crm/db';
import { type Stack, sharedStack, type TestTenant } from '@crm/testing';
import { sql } from 'kysely';
import { migrations } from '../services/sales/src/db/migrations/index.ts';

let stack: Stack;
let tenant: TestTenant;
let neighbour: TestTenant;

beforeAll(async () => {
  stack = await sharedStack();
  tenant = await stack.createTenant();
  neighbour = await stack.createTenant();
}, 60_000);

async function rowCount(tenantId: string): Promise<number> {
  const { rows } = await stack.sql('select count(*)::int as n from sales.contacts where tenant_id = $1', [tenantId]);
  return (rows[0] as { n: number }).n;
}

async function listedTotal(t: TestTenant): Promise<number> {
  const res = await t.request('GET', '/v1/contacts?per_page=1');
  expect(res.status).toBe(200);
  return res.body.pagination.total;
}

async function expectExact(t: TestTenant, expected: number): Promise<void> {
  expect(await rowCount(t.tenantId)).toBe(expected);
  expect(await listedTotal(t)).toBe(expected);
}

describe('unfiltered contact totals are maintained exactly', () => {
  test('creates, batch creates, upserts and deletes through the API; the neighbour tenant unaffected', async () => {
    await expectExact(tenant, 0);
    const one = await tenant.request('POST', '/v1/contacts', { body: { name: 'Count one', type: 'client' } });
    expect(one.status).toBe(201);
    await expectExact(tenant, 1);
    const batch = await tenant.request('POST', '/v1/contacts/batch', {
      body: { data: Array.from({ length: 12 }, (_, i) => ({ name: `Count batch ${i}`, type: 'lead' })) },
    });
    expect(batch.status).toBe(201);
    await expectExact(tenant, 13);
    // Upsert: two matches (updates) and one new contact.
    const upsert = await tenant.request('POST', '/v1/contacts/batch/upsert', {
      body: {
        id_property: 'name',
        data: [
          { name: 'Count batch 0', type: 'client' },
          { name: 'Count batch 1', type: 'client' },
          { name: 'Count upserted', type: 'client' },
        ],
      },
    });
    expect(upsert.status).toBe(200);
    await expectExact(tenant, 14);
    for (const contact of batch.body.data.slice(0, 5)) {
      expect((await tenant.request('DELETE', `/v1/contacts/${contact.id}`)).status).toBe(200);
    }
    await expectExact(tenant, 9);
    await expectExact(neighbour, 0);
  });

  test('concurrent writers of one tenant: every create and delete counted once', async () => {
    const before = await rowCount(tenant.tenantId);
    const created = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        tenant.request('POST', '/v1/contacts', { body: { name: `Count concurrent ${i}`, type: 'client' } }),
      ),
    );
    expect(created.every((r) => r.status === 201)).toBe(true);
    await expectExact(tenant, before + 40);
    const deleted = await Promise.all(created.slice(0, 15).map((r) => tenant.request('DELETE', `/v1/contacts/${r.body.data.id}`)));
    expect(deleted.every((r) => r.status === 200)).toBe(true);
    await expectExact(tenant, before + 25);
  });

  test('bulk SQL inserts and deletes are followed too; a move between tenants is refused', async () => {
    const before = await rowCount(tenant.tenantId);
    await stack.sql(
      `insert into sales.contacts (tenant_id, name, type, created_at, updated_at)
       select $1, 'Count bulk ' || g, 'client', now(), now() from generate_series(1, 500) g`,
      [tenant.tenantId],
    );
    await expectExact(tenant, before + 500);
    await stack.sql(`delete from sales.contacts where tenant_id = $1 and name like 'Count bulk 1%'`, [tenant.tenantId]);
    await expectExact(tenant, before + 500 - 111);
    // A contact never moves to another tenant (the counts could not follow it): refused.
    const moved = stack.sql(`update sales.contacts set tenant_id = $2 where tenant_id = $1 and name like 'Count bulk 2%'`, [
      tenant.tenantId,
      neighbour.tenantId,
    ]);
    await expect(moved).rejects.toThrow('never moves to another tenant');
    await expectExact(tenant, before + 500 - 111);
    await expectExact(neighbour, 0);
    // An update that does not move rows changes no count.
    await stack.sql(`update sales.contacts set tenant_id = tenant_id, name = name || '.' where tenant_id = $1`, [tenant.tenantId]);
    await expectExact(tenant, before + 500 - 111);
  });
});

describe('migration 0032 (scratch schema, then dropped)', () => {
  test('counts the rows that existed before it; TRUNCATE empties the counts', async () => {
    const schema = `sales_counts_${crypto.randomUUID().slice(0, 8)}`;
    const { db } = createDb<any>({ url: stack.databaseUrl, schema, max: 1 });
    const index = migrations.findIndex((m) => m.name === '0032_contact_counts');
    try {
      await migrate(db, schema, migrations.slice(0, index));
      const run = (text: string) => sql.raw(text).execute(db);
      await run(`insert into contacts (tenant_id, name, type, created_at, updated_at)
        select case when g % 3 = 0 then 'a' else 'b' end, 'Old ' || g, 'client', now(), now() from generate_series(1, 300) g`);
      expect(await migrate(db, schema, migrations.slice(0, index + 1))).toEqual(['0032_contact_counts']);
      const totals = async () =>
        (await sql.raw<any>('select tenant_id, sum(n)::int as n from contact_counts group by tenant_id order by tenant_id').execute(db))
          .rows;
      expect(await totals()).toEqual([
        { tenant_id: 'a', n: 100 },
        { tenant_id: 'b', n: 200 },
      ]);
      await run(`insert into contacts (tenant_id, name, type, created_at, updated_at) values ('a', 'New', 'client', now(), now())`);
      expect(await totals()).toEqual([
        { tenant_id: 'a', n: 101 },
        { tenant_id: 'b', n: 200 },
      ]);
      await run('truncate contacts cascade');
      expect(await totals()).toEqual([]);
    } finally {
      await sql.raw(`drop schema ${schema} cascade`).execute(db);
      await db.destroy();
    }
  });
});
