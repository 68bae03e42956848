// `npx bun loadtest/read-paths.ts`: what each resource's read costs, straight to its service (the
// gateway's headers, no gateway): `GET` of one contact, opportunity, order, product, product
// category and document, and the first 25-item page of each list. On a stack of its own, one
// tenant holds READ_PATHS_ITEMS (30) of each (orders of two lines, products of two rates, small
// text documents, a category with five children) and READ_PATHS_CATEGORY_ROOTS (25) more root
// categories of two children each (the categories page: 25 trees; more roots make the tenant's
// category table larger for the category read). For each path: wrk with 16 connections, 1 s of
// warm-up then READ_PATHS_SECONDS (4), printing requests/s, p50, and the CPU ms per request of the
// service's process and of its PostgreSQL backends (application_name `crm-<service>`, /proc).
// Figures: loadtest/README.md ("Issue 18, twelfth session" and "thirteenth session").
import { startStack } from '@crm/testing';
import { uploadToContact } from '../tests/documents-fixtures.ts';
import { createOrder, orderWorld } from '../tests/orders-fixtures.ts';
import { processTicks } from './lib/cpu.ts';
import { runWrk, wrkBinary } from './lib/wrk.ts';

const ITEMS = Number(process.env.READ_PATHS_ITEMS ?? 30);
const SECONDS = Number(process.env.READ_PATHS_SECONDS ?? 4);
const CATEGORY_ROOTS = Number(process.env.READ_PATHS_CATEGORY_ROOTS ?? 25);
const log = (m: string) => console.log(`[read-paths] ${m}`);

wrkBinary(log);
const stack = await startStack({ env: { LOG_LEVEL: 'warn' } });
try {
  const { tenant, contactId } = await orderWorld(stack);
  const created = async (path: string, body: unknown) => {
    const res = await tenant.request('POST', path, { body });
    if (res.status !== 201) throw new Error(`POST ${path} → ${res.status} ${res.text}`);
    return res.body.data;
  };
  const tools = (await tenant.request('GET', '/v1/product-categories')).body.data[0].id as number;
  for (let i = 0; i < 5; i++) await created('/v1/product-categories', { name: `Sub ${i}`, reference: `sub-${i}`, parent_id: tools });
  // Root categories of two children each: the categories page shows 25 of these trees.
  for (let i = 0; i < CATEGORY_ROOTS; i++) {
    const root = (await created('/v1/product-categories', { name: `Root ${i}`, reference: `root-${i}` })).id as number;
    for (let j = 0; j < 2; j++)
      await created('/v1/product-categories', { name: `Leaf ${i}.${j}`, reference: `leaf-${i}-${j}`, parent_id: root });
  }
  await created('/v1/products/batch', {
    data: Array.from({ length: ITEMS }, (_, i) => ({
      reference: `RP-${i}`,
      name: `Read path product ${i}`,
      vat: 21,
      product_category_ref: 'tools',
      rates: [
        { sku: `RP-${i}-A`, cost: 1, price: 2 },
        { sku: `RP-${i}-B`, cost: 2, price: 3.5 },
      ],
    })),
  });
  let order: { reference: string } | undefined;
  let opportunity: { id: number } | undefined;
  let document: { id: number } | undefined;
  for (let i = 0; i < ITEMS; i++) {
    order = await createOrder(tenant, {
      products: [
        { reference: 'WIDGET', quantity: 2 },
        { reference: 'GADGET', quantity: 1 },
      ],
    });
    opportunity = await created('/v1/opportunities', { name: `Deal ${i}`, enterprise_identifier: String(contactId), amount: 100 + i });
    const upload = await uploadToContact(tenant, contactId, `note-${i}.txt`, new TextEncoder().encode(`note ${i}`));
    if (upload.status !== 201) throw new Error(`upload → ${upload.status} ${upload.text}`);
    document = upload.body.data;
  }
  const headers = { 'x-internal-token': stack.internalToken, 'x-tenant-id': tenant.tenantId };
  const cases: [string, 'sales' | 'catalog' | 'documents', string][] = [
    ['contact', 'sales', `/v1/contacts/${contactId}`],
    ['opportunity', 'sales', `/v1/opportunities/${opportunity?.id}`],
    ['order', 'sales', `/v1/orders/${order?.reference}`],
    ['product', 'catalog', '/v1/products/RP-0'],
    ['product category', 'catalog', `/v1/product-categories/${tools}`],
    ['document', 'documents', `/v1/documents/${document?.id}`],
    ['contacts page', 'sales', '/v1/contacts?per_page=25'],
    ['opportunities page', 'sales', '/v1/opportunities?per_page=25'],
    ['orders page', 'sales', '/v1/orders?per_page=25'],
    ['products page', 'catalog', '/v1/products?per_page=25'],
    ['categories page', 'catalog', '/v1/product-categories?per_page=25'],
    ['documents page', 'documents', '/v1/documents?per_page=25'],
  ];
  const backendTicks = async (service: string) => {
    const { rows } = await stack.sql<{ pid: number }>('select pid from pg_stat_activity where application_name = $1', [`crm-${service}`]);
    return rows.reduce((sum, { pid }) => sum + (processTicks(pid) ?? 0), 0);
  };
  log(`${'path'.padEnd(20)} ${'req/s'.padStart(7)}  p50 ms  CPU ms/request: service postgres`);
  for (const [label, service, path] of cases) {
    const url = stack.processes[service].url + path;
    const check = await fetch(url, { headers });
    if (check.status !== 200) throw new Error(`${label}: ${check.status} ${await check.text()}`);
    await runWrk({ url, method: 'GET', headers }, { seconds: 1, connections: 16 });
    const pid = stack.processes[service].child.pid as number;
    const [serviceBefore, postgresBefore] = [processTicks(pid) ?? 0, await backendTicks(service)];
    const figures = await runWrk({ url, method: 'GET', headers }, { seconds: SECONDS, connections: 16 });
    const perRequest = (ticks: number) => ((ticks * 10) / Math.max(1, figures.requests)).toFixed(3);
    log(
      `${label.padEnd(20)} ${figures.rps.toFixed(0).padStart(7)}  ${figures.p50.toFixed(2).padStart(6)}  ${service.padStart(9)} ${perRequest((processTicks(pid) ?? 0) - serviceBefore)} ${perRequest((await backendTicks(service)) - postgresBefore)}`,
    );
  }
} finally {
  await stack.stop();
}
