// Documents' named prepared statement for one document's row (`DOCUMENT_BY_ID`) on real
// PostgreSQL, in a scratch schema with documents' migrations: its row, its opportunities, its
// tenant only, and a generic plan that PostgreSQL keeps (`tests/prepared-plans.ts`).
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { type Kysely, sql } from 'kysely';
import { migrations } from '../services/documents/src/db/migrations/index.ts';
import { DOCUMENT_BY_ID, DOCUMENTS_BY_IDS, findDocument } from '../services/documents/src/documents/repo.ts';
import { closePlanScope, genericPlanOf, openPlanScope, type PlanScope, plansOnOneConnection } from './prepared-plans.ts';

let scope: PlanScope;
let db: Kysely<any>;
let ids: number[] = [];

beforeAll(async () => {
  scope = await openPlanScope('documents_plans', migrations);
  db = scope.db;
  // 3,000 documents in two tenants; every third linked to opportunities 30 and 7 (inserted in that order).
  await sql`insert into document_categories (tenant_id, name) values ('mine', 'General'), ('theirs', 'General')`.execute(db);
  const inserted = await sql<{
    id: number;
  }>`insert into documents (tenant_id, name, filename, extension, mime_type, size_bytes, storage_key, contact_id, category_id)
    select t, 'Doc ' || g, g || '.pdf', 'pdf', case when g % 2 = 0 then 'application/pdf' end, g * 10, t || '/' || g || '.pdf',
      case when g % 5 = 0 then null else g end, (select id from document_categories c where c.tenant_id = t)
    from generate_series(1, 3000) g, lateral (select case when g % 2 = 0 then 'mine' else 'theirs' end as t) x
    returning id`.execute(db);
  ids = inserted.rows.map((r) => Number(r.id));
  await sql`insert into document_opportunities (document_id, tenant_id, opportunity_id)
    select d.id, d.tenant_id, o from documents d cross join (values (30), (7)) v(o) where d.id % 3 = 0`.execute(db);
}, 60_000);

afterAll(() => closePlanScope(scope));

test("one document's row, with its opportunities in order, in its own tenant only", async () => {
  const { rows } = await sql<{ id: string; tenant_id: string }>`select id, tenant_id from documents
    where id % 3 = 0 order by id limit 2`.execute(db);
  const [a, b] = rows as [{ id: string; tenant_id: string }, { id: string; tenant_id: string }];
  const other = a.tenant_id === 'mine' ? 'theirs' : 'mine';
  const found = await findDocument(db, a.tenant_id, Number(a.id));
  expect(found).toMatchObject({ id: Number(a.id), tenant_id: a.tenant_id, extension: 'pdf', storage_key: expect.stringMatching(/\.pdf$/) });
  expect(found?.opportunity_ids.map(Number)).toEqual([7, 30]);
  expect(found?.created_at).toBeInstanceOf(Date);
  expect(await findDocument(db, other, Number(a.id))).toBeUndefined();
  const unlinked = ids.find((id) => id % 3 !== 0) as number;
  const tenantOf = (await sql<{ tenant_id: string }>`select tenant_id from documents where id = ${unlinked}`.execute(db)).rows[0]
    ?.tenant_id;
  expect((await findDocument(db, tenantOf as string, unlinked))?.opportunity_ids).toEqual([]);
  expect(await findDocument(db, b.tenant_id, 10_000_000)).toBeUndefined();
});

test("the document read keeps its generic plan: the row by its tenant's index, its opportunities by their key", async () => {
  const { rows } = await sql<{ id: string }>`select id from documents where tenant_id = 'mine' order by id limit 12`.execute(db);
  const plans = await plansOnOneConnection(scope, DOCUMENT_BY_ID.sql, async (single) => {
    for (const { id } of rows) expect((await findDocument(single, 'mine', Number(id)))?.id).toBe(Number(id));
  });
  expect(plans).toEqual([{ custom: 5, generic: 7 }]);
  const { rows: read, pages } = await genericPlanOf(scope, DOCUMENT_BY_ID.sql, 'text, bigint', `'mine', ${rows[3]?.id}`);
  expect(read).toBe(1);
  expect(pages).toBeLessThan(12);
});

test("a list page's documents by ids: the rows read one by one, in their own tenant only, with the generic plan kept", async () => {
  const page = ids.slice(0, 30);
  const { rows } = await DOCUMENTS_BY_IDS.execute(db, ['mine', [...page, ...page]]);
  const mine = (
    await sql<{ id: string }>`select id from documents where tenant_id = 'mine' and id = any(${page}::bigint[]) order by id`.execute(db)
  ).rows.map((r) => Number(r.id));
  expect(rows.map((r) => r.id).sort((a, b) => a - b)).toEqual(mine);
  for (const row of rows) expect(row).toEqual((await findDocument(db, 'mine', row.id)) as (typeof rows)[number]);
  const plans = await plansOnOneConnection(scope, DOCUMENTS_BY_IDS.sql, async (single) => {
    for (const id of mine.slice(0, 12)) expect((await DOCUMENTS_BY_IDS.execute(single, ['mine', [id]])).rows).toHaveLength(1);
  });
  expect(plans).toEqual([{ custom: 5, generic: 7 }]);
  const { rows: read, pages } = await genericPlanOf(scope, DOCUMENTS_BY_IDS.sql, 'text, bigint[]', `'mine', '{${mine[0]},${mine[1]}}'`);
  expect(read).toBe(2);
  expect(pages).toBeLessThan(20);
});
