import { AccountUser, UpsertUserRequest } from '@crm/contracts';
import { ListQuery, Pagination, pageRequest, paginationOf } from '@crm/db';
import { checkedQuery, jsonBody, listQuery, notFound, requestContext, throwIfInvalid } from '@crm/http';
import { Elysia, t } from 'elysia';
import type { Kysely } from 'kysely';
import type { SalesDatabase } from '../db/database.ts';
import { findUserByEmail, listUsers, upsertUser } from './repo.ts';

const SORTABLE = ['id', 'name', 'email', 'created_at', 'updated_at'] as const;
const ByEmailQuery = t.Object({ email: t.String() }, { additionalProperties: true });

/** Account users: the public list and the internal API the gateway and other services use. */
export function usersRoutes(db: Kysely<SalesDatabase>) {
  return new Elysia({ name: 'sales-users' })
    .use(requestContext)
    .get(
      '/v1/users',
      async ({ query, tenantId }) => {
        const { request, errors } = pageRequest(query, SORTABLE);
        throwIfInvalid(errors);
        const { total, rows } = await listUsers(db, tenantId, request);
        return { data: rows, pagination: paginationOf(total, request.perPage, request.page) };
      },
      {
        ...listQuery(ListQuery, SORTABLE),
        response: { 200: t.Object({ data: t.Array(AccountUser), pagination: Pagination }) },
        detail: { summary: "List the account's users", tags: ['Users'] },
      },
    )
    .post(
      '/internal/users',
      async ({ body, tenantId, set }) => {
        set.status = 201;
        return { data: await upsertUser(db, tenantId, body.email, body.name) };
      },
      jsonBody(UpsertUserRequest),
    )
    .get(
      '/internal/users/by-email',
      async ({ query, tenantId }) => {
        const user = await findUserByEmail(db, tenantId, query.email);
        if (!user) throw notFound('User');
        return { data: user };
      },
      checkedQuery(ByEmailQuery),
    );
}
