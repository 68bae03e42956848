import { AccountUser } from '@crm/contracts';
import { AppError, requestContext } from '@crm/http';
import { Elysia, t } from 'elysia';
import { listTenants } from './repo.ts';
import { addTenantUser, createTenant, getTenant, rotateTenantKey, setTenantLimits, type TenantDeps } from './service.ts';

const Limits = t.Object({
  read_per_minute: t.Integer({ minimum: 1, maximum: 1_000_000 }),
  write_per_minute: t.Integer({ minimum: 1, maximum: 1_000_000 }),
});
const UserInput = t.Object({ email: t.String({ format: 'email', maxLength: 255 }), name: t.String({ minLength: 1, maxLength: 255 }) });

/** Operator API (contract §5), outside /v1, guarded by `Authorization: Bearer <ADMIN_TOKEN>`. */
export function adminRoutes(deps: TenantDeps, adminToken: string) {
  return new Elysia({ name: 'gateway-admin', prefix: '/admin' })
    .use(requestContext)
    .onBeforeHandle(({ request }) => {
      if (request.headers.get('authorization') !== `Bearer ${adminToken}`) {
        throw new AppError('unauthorized', 'Missing or invalid admin token');
      }
    })
    .post(
      '/tenants',
      async ({ body, requestId, set }) => {
        set.status = 201;
        return { data: await createTenant(deps, body, requestId) };
      },
      {
        body: t.Object({
          name: t.String({ minLength: 1, maxLength: 255 }),
          users: t.Optional(t.Array(UserInput, { maxItems: 100 })),
          limits: t.Optional(t.Partial(Limits)),
        }),
      },
    )
    .get('/tenants', async () => ({
      data: (await listTenants(deps.db)).map((r) => ({
        tenant_id: r.id,
        name: r.name,
        limits: { read_per_minute: r.read_per_minute, write_per_minute: r.write_per_minute },
        created_at: r.created_at.toISOString(),
      })),
    }))
    .get('/tenants/:id', async ({ params }) => ({ data: await getTenant(deps, params.id) }))
    .post('/tenants/:id/rotate-key', async ({ params }) => ({ data: await rotateTenantKey(deps, params.id) }))
    .post(
      '/tenants/:id/users',
      async ({ params, body, requestId, set }) => {
        await getTenant(deps, params.id);
        set.status = 201;
        return { data: await addTenantUser(deps, params.id, body, requestId) };
      },
      { body: UserInput, response: { 201: t.Object({ data: AccountUser }) } },
    )
    .put('/tenants/:id/limits', async ({ params, body }) => ({ data: await setTenantLimits(deps, params.id, body) }), {
      body: t.Partial(Limits),
    });
}
