import { createHash, timingSafeEqual } from 'node:crypto';
import { AccountUser } from '@crm/contracts';
import { AppError, jsonBody, MAX_INT, Name, requestContext } from '@crm/http';
import { Elysia, t } from 'elysia';
import { MAX_JSON_BYTES } from '../proxy/body.ts';
import { listTenants } from './repo.ts';
import { addTenantUser, createTenant, getTenant, rotateTenantKey, setTenantLimits, type TenantDeps } from './service.ts';

const Limit = (description: string) => t.Integer({ minimum: 1, maximum: MAX_INT, description });
const LimitsPatch = t.Object(
  {
    read_per_minute: t.Optional(Limit('Reads (GET, HEAD) per minute, 1..2147483647')),
    write_per_minute: t.Optional(Limit('Writes (POST, PUT, PATCH, DELETE) per minute, 1..2147483647')),
  },
  { additionalProperties: false },
);
const UserInput = t.Object({ email: t.String({ format: 'email', maxLength: 255 }), name: Name() }, { additionalProperties: false });
const TenantCreate = t.Object(
  { name: Name(), users: t.Optional(t.Array(UserInput, { maxItems: 100 })), limits: t.Optional(LimitsPatch) },
  { additionalProperties: false },
);
/** Tenant ids are UUIDs: any other path segment names no tenant (404, never a database error). */
const TenantParams = t.Object({ id: t.String({ format: 'uuid', description: 'Tenant id (UUID)' }) });

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Whether the Authorization header carries the bearer token, compared in constant time. */
function carriesToken(authorization: string | null, tokenDigest: Buffer): boolean {
  const match = /^bearer +(.+)$/i.exec(authorization ?? '');
  return match !== null && timingSafeEqual(digest(match[1] as string), tokenDigest);
}

/** Whether a request URL's path is under /admin. */
function isAdminPath(url: string): boolean {
  const pathStart = url.indexOf('/', url.indexOf('//') + 2);
  const path = pathStart === -1 ? '/' : url.slice(pathStart);
  return path === '/admin' || path.startsWith('/admin/') || path.startsWith('/admin?');
}

/**
 * Operator API (contract §5), outside /v1, guarded by `Authorization: Bearer <ADMIN_TOKEN>`.
 * The token is checked when the request arrives, before its body is read (§19): without it
 * every /admin request is 401, whatever its body or path.
 */
export function adminRoutes(deps: TenantDeps, adminToken: string) {
  const tokenDigest = digest(adminToken);
  return new Elysia({ name: 'gateway-admin', prefix: '/admin' })
    .use(requestContext)
    .onRequest(({ request }) => {
      if (!isAdminPath(request.url)) return;
      if (!carriesToken(request.headers.get('authorization'), tokenDigest))
        throw new AppError('unauthorized', 'Missing or invalid admin token');
      if (Number(request.headers.get('content-length') ?? 0) > MAX_JSON_BYTES) {
        throw new AppError('payload_too_large', `JSON body must be at most ${MAX_JSON_BYTES} bytes`);
      }
    })
    .post(
      '/tenants',
      async ({ body, requestId, set }) => {
        set.status = 201;
        return { data: await createTenant(deps, body, requestId) };
      },
      jsonBody(TenantCreate),
    )
    .get('/tenants', async () => ({
      data: (await listTenants(deps.db)).map((r) => ({
        tenant_id: r.id,
        name: r.name,
        limits: { read_per_minute: r.read_per_minute, write_per_minute: r.write_per_minute },
        created_at: r.created_at.toISOString(),
      })),
    }))
    .get('/tenants/:id', async ({ params }) => ({ data: await getTenant(deps, params.id) }), { params: TenantParams })
    .post('/tenants/:id/rotate-key', async ({ params }) => ({ data: await rotateTenantKey(deps, params.id) }), { params: TenantParams })
    .post(
      '/tenants/:id/users',
      async ({ params, body, requestId, set }) => {
        await getTenant(deps, params.id);
        set.status = 201;
        return { data: await addTenantUser(deps, params.id, body, requestId) };
      },
      { params: TenantParams, ...jsonBody(UserInput), response: { 201: t.Object({ data: AccountUser }) } },
    )
    .put('/tenants/:id/limits', async ({ params, body }) => ({ data: await setTenantLimits(deps, params.id, body) }), {
      params: TenantParams,
      ...jsonBody(LimitsPatch),
    });
}
