// The floor of `npm run bench`: what `GET /v1/contacts/{identifier}` minimally costs on this
// machine — the runtime's own HTTP server (Bun.serve, or Deno.serve under Deno), the same pg
// driver and pool size as sales, ONE SQL statement (a named prepared statement: planned once per
// connection) that applies the identifier rule of contract §11 and reads the contact with its
// location and users, and the same JSON bytes as sales (the bench compares them before measuring). No framework, validation, auth, logs, metrics or ETag.
// Env: DATABASE_URL (the stack's), FLOOR_PORT. Tenant from `x-tenant-id`, like a service.
import pg from 'pg';

const MAX_ID = 2_147_483_647;

// COALESCE evaluates its arguments only until one is not null, so an id that exists costs one
// probe and the later rules run only when the earlier ones found nothing.
const SQL = `
select c.id, c.name, c.type, c.email, c.is_person, c.cif, c.phone, c.web, c.iban, c.comments,
  (select coalesce(json_agg(u), '[]') from (
     select users.id, users.name, users.email from contact_users
     join users on users.id = contact_users.user_id
     where contact_users.contact_id = c.id order by contact_users.position) u) as users,
  (select to_json(l) from (
     select id, "primary", direction, city, postal, country, latitude, longitude, extra_info
     from contact_locations where contact_id = c.id) l) as location,
  c.extra_fields, c.created_at, c.updated_at
from contacts c
where c.tenant_id = $1 and c.id = coalesce(
  (select k.id from contacts k where k.tenant_id = $1 and k.id = $2::integer),
  (select k.id from contacts k where k.tenant_id = $1 and k.name = $3 order by k.id limit 1),
  (select k.id from contacts k where k.tenant_id = $1 and lower(k.email) = lower($3) order by k.id limit 1),
  (select k.id from contacts k where k.tenant_id = $1 and k.cif = $3 order by k.id limit 1))`;

// Pool size as sales'. Idle connections are never closed (0): the floor measures the answer, not
// connection setup. With pg's default of 10 s they closed while the bench ran the other cases
// (sales, which nearly every case uses, kept its own), and each of the floor's next cases began by
// opening and warming new backends: on a VM where that is slow its p99 read 40-210 ms where
// sales' read 8-14, and it served 10-40 % fewer reads (loadtest/README.md, eighteenth session).
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: 5,
  idleTimeoutMillis: 0,
  options: '-c search_path=sales,public',
});
const PREFIX = '/v1/contacts/';
const JSON_TYPE = { 'content-type': 'application/json' };

async function handle(request: Request): Promise<Response> {
  const url = request.url;
  const start = url.indexOf('/', url.indexOf('//') + 2);
  const query = url.indexOf('?', start);
  const path = query === -1 ? url.slice(start) : url.slice(start, query);
  if (path === '/readyz' || path === '/livez') return new Response('ok');
  if (!path.startsWith(PREFIX)) return new Response(null, { status: 404 });
  const identifier = decodeURIComponent(path.slice(PREFIX.length));
  const asId = /^\d+$/.test(identifier) && Number(identifier) <= MAX_ID ? Number(identifier) : null;
  const { rows } = await pool.query({ name: 'contact', text: SQL, values: [request.headers.get('x-tenant-id'), asId, identifier] });
  const row = rows[0];
  if (!row) return new Response('{"error":{"type":"not_found"}}', { status: 404, headers: JSON_TYPE });
  const data = {
    id: row.id,
    name: row.name,
    type: row.type,
    email: row.email,
    is_person: row.is_person,
    cif: row.cif,
    phone: row.phone,
    web: row.web,
    iban: row.iban,
    comments: row.comments,
    users: row.users,
    location: row.location,
    extra_fields: row.extra_fields,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
  return new Response(JSON.stringify({ data }), { headers: JSON_TYPE });
}

const g = globalThis as any;
const port = Number(process.env.FLOOR_PORT);
if (g.Bun) g.Bun.serve({ port, hostname: '127.0.0.1', fetch: handle });
else g.Deno.serve({ port, hostname: '127.0.0.1', onListen() {} }, handle);
// Exit normally on SIGTERM, so that a profiled run (`bun --cpu-prof-md`) writes its profile.
process.on('SIGTERM', () => process.exit(0));
