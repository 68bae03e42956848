// Compile-time checks of the typed surface (run by `npm run typecheck`, never executed): paths,
// parameters, bodies and answers come from the OpenAPI document; every @ts-expect-error line must
// stay an error, or the types have gone loose.
import { type Contact, type CrmEvent, createClient, type Order } from '../src/index.ts';

/** Compiles only when `value` is assignable to `T`. */
const expectType = <T>(value: T): T => value;

export async function typedUsage() {
  const client = createClient({ baseUrl: 'http://127.0.0.1:8080', apiKey: 'crm_x' });

  const created = await client.contacts.create({ name: 'Acme', type: 'client', location: { city: 'Lyon' } });
  expectType<Contact>(created.data);
  expectType<number>(created.data.id);
  expectType<string | null>(created.etag);
  // @ts-expect-error an unknown field is refused by the API, and by the types
  await client.contacts.create({ name: 'Acme', type: 'client', nickname: 'A' });
  // @ts-expect-error `type` is required
  await client.contacts.create({ name: 'Acme' });

  const got = await client.request('get', '/v1/contacts/{identifier}', { params: { identifier: 'Acme' } });
  expectType<string>(got.data.name);
  // @ts-expect-error path parameters are required
  await client.request('get', '/v1/contacts/{identifier}');
  // @ts-expect-error not a path of the API
  await client.request('get', '/v1/customers');
  // @ts-expect-error /v1/contacts takes no PUT
  await client.request('put', '/v1/contacts', { body: {} });

  const page = await client.request('get', '/v1/contacts', { query: { per_page: 5, sort: '-name' } });
  expectType<string | null>(page.body.pagination.next_cursor);
  expectType<Contact[]>(page.data);
  for await (const contact of client.iterate('/v1/contacts', { query: { per_page: 100 } })) expectType<string>(contact.name);
  for await (const document of client.iterate('/v1/contacts/{identifier}/documents', { params: { identifier: 'Acme' } }))
    expectType<number>(document.id);
  // @ts-expect-error a nested list needs its path parameters
  client.iterate('/v1/contacts/{identifier}/documents');
  for await (const order of client.orders.iterate({ sort: '-created_at' })) expectType<Order>(order);

  await client.contacts.update('Acme', { phone: null }, { ifMatch: created.etag ?? '*', idempotencyKey: 'sync-42' });
  // @ts-expect-error phone is a string or null
  await client.contacts.update('Acme', { phone: 42 });

  await client.upload('/v1/contacts/{identifier}/documents', new Uint8Array(3), {
    params: { identifier: 'Acme' },
    filename: 'notes.txt',
    name: 'Notes',
    document_category_id: 1,
  });
  // @ts-expect-error not an upload path
  await client.upload('/v1/contacts', new Uint8Array(3), { params: {} });
  const file = await client.download(3);
  expectType<Uint8Array>(await file.bytes());

  expectType<CrmEvent>((await client.events.get('evt_1')).data);
  const fresh = await client.contacts.getIfChanged('Acme', '"etag"');
  if (fresh) expectType<Contact>(fresh.data);
  expectType<boolean>((await client.contacts.delete('Acme')).body.deleted);
}
