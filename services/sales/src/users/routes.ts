import { AccountUser, UpsertUserRequest } from '@crm/contracts';
import { listPagination, listRequest, type SortType } from '@crm/db';
import { checkedQuery, jsonBody, ListPagination, ListQuery, listQuery, notFound, requestContext, throwIfInvalid } from '@crm/http';
import { Elysia, t } from 'elysia';
import type { Kysely } from 'kysely';
import type { SalesDatabase } from '../db/database.ts';
import { findUserByEmail, listUsers, upsertUser } from './repo.ts';

/** Sortable fields and their column types (a cursor's sort value is cast back with it). */
const SORTS: Record<string, SortType> = {
  id: 'integer',
  name: 'text',
  email: 'text',
  created_at: 'timestamptz',
  updated_at: 'timestamptz',
};
const SORT_NAMES = Object.keys(SORTS);
const UserListResponse = t.Object({ data: t.Array(AccountUser), pagination: ListPagination }, { title: 'UserListResponse' });
const UserByEmailQuery = t.Object({ email: t.String() }, { additionalProperties: true });

/** Account users: the public list and the internal API the gateway and other services use. */
export function usersRoutes(db: Kysely<SalesDatabase>) {
  return new Elysia({ name: 'sales-users' })
    .use(requestContext)
    .get(
      '/v1/users',
      async ({ query, tenantId }) => {
        const { request, errors } = listRequest(query, SORTS);
        throwIfInvalid(errors);
        const { page, rows } = await listUsers(db, tenantId, request);
        return { data: rows, pagination: listPagination(page, request) };
      },
      {
        ...listQuery(ListQuery, SORT_NAMES),
        response: { 200: UserListResponse },
        detail: {
          summary: "List the account's users",
          tags: ['Users'],
          description: [
            "The e-mails listed here are the valid values of a contact's `users` and an opportunity's or order's `user_email`. Filter `updated_since`; `sort` on id, name, email, created_at, updated_at (`-field` descending, ties by id).",
            'Page mode (`page`, default) counts the users; cursor mode (`cursor` = `pagination.next_cursor`) continues after the last user with the same sort and filters without counting (`total`, `current_page`, `last_page` are null). A cursor with another sort or filters, a malformed one, or `cursor` with `page` → 422 on `cursor`. The `Link` header has first/prev/next/last page URLs in page mode and the next cursor URL in cursor mode.',
          ].join('\n\n'),
        },
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
      checkedQuery(UserByEmailQuery),
    );
}
