import { listPagination, listRequest, type SortType } from '@crm/db';
import { AppError, ListPagination, listQuery, listQueryWith, requestContext, throwIfInvalid } from '@crm/http';
import { Elysia, t } from 'elysia';
import type { Kysely } from 'kysely';
import type { GatewayDatabase } from '../db/database.ts';
import { listAuditLogs } from './repo.ts';

/** Records are listed by time only (then id): the index is (tenant_id, occurred_at, id). */
const SORT_TYPES: Record<string, SortType> = { occurred_at: 'timestamptz' };
const SORTABLE = Object.keys(SORT_TYPES);

/** The HTTP methods (RFC 9110, RFC 5789) a `method` filter may name, in any letter case. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT'] as const;
const anyCase = (word: string) => [...word].map((c) => `[${c}${c.toLowerCase()}]`).join('');

const AuditLog = t.Object(
  {
    id: t.Integer(),
    occurred_at: t.String({ format: 'date-time' }),
    request_id: t.String(),
    tenant_id: t.Nullable(t.String()),
    key_id: t.Nullable(t.String({ description: 'Id of the API key used (never the key itself)' })),
    method: t.String(),
    path: t.String(),
    query: t.Nullable(t.String({ description: 'Query string; values of key/token/secret/password parameters redacted' })),
    status: t.Integer(),
    duration_ms: t.Number(),
    client_ip: t.Nullable(t.String()),
    user_agent: t.Nullable(t.String({ description: 'As sent; a U+0000 character is stored as U+FFFD' })),
    idempotency_key: t.Nullable(t.String()),
    replayed: t.Boolean(),
    error_type: t.Nullable(t.String()),
  },
  {
    title: 'AuditLog',
    examples: [
      {
        id: 1,
        occurred_at: '2026-11-20T09:30:00.000Z',
        request_id: '0b9f8f3e-3c7e-4f57-9a57-5d0c1f0e7a11',
        tenant_id: '7c1e4b52-98a1-4f0e-b3d2-6a5f0c9e8d17',
        key_id: 'key_2c9d7e41-5a3b-4f6e-8d1c-0b7a9e3f5d28',
        method: 'POST',
        path: '/v1/contacts',
        query: null,
        status: 201,
        duration_ms: 23.4,
        client_ip: '203.0.113.7',
        user_agent: 'crm-client/1.0',
        idempotency_key: '5d1c8a2e-1f3b-4c6d-9e8f-0a1b2c3d4e5f',
        replayed: false,
        error_type: null,
      },
    ],
  },
);

const AuditLogListResponse = t.Object({ data: t.Array(AuditLog), pagination: ListPagination }, { title: 'AuditLogListResponse' });

const instant = (value: string | undefined) => (value === undefined ? undefined : new Date(value));

const Instant = (description: string) => t.String({ format: 'date-time', description: `${description} (RFC 3339, with Z or an offset)` });

const AuditQuery = listQueryWith({
  sort: t.Optional(t.String({ description: '`-occurred_at` (newest first, the default) or `occurred_at`' })),
  updated_since: t.Optional(Instant('Records never change: the same as `from`')),
  from: t.Optional(Instant('Only records at or after this instant')),
  to: t.Optional(Instant('Only records before this instant')),
  status: t.Optional(t.Integer({ minimum: 100, maximum: 599, description: 'Exact HTTP status, 100..599' })),
  method: t.Optional(
    t.String({
      pattern: `^(?:${METHODS.map(anyCase).join('|')})$`,
      patternMessage: `must be one of ${METHODS.join(', ')}`,
      description: `HTTP method, any case: ${METHODS.join(', ')}`,
    }),
  ),
  path: t.Optional(t.String({ description: 'Exact path, or a prefix ending in `*` (e.g. `/v1/contacts*`)' })),
});

/** GET /v1/audit-logs (contract §9): the calling tenant's own records, newest first. */
export function auditRoutes(db: Kysely<GatewayDatabase>) {
  return new Elysia({ name: 'gateway-audit' }).use(requestContext).get(
    '/v1/audit-logs',
    async ({ query, tenantId }) => {
      // Set by the pipeline once the key is verified; this route is reachable only through it.
      if (!tenantId) throw new AppError('unauthorized', 'Missing or invalid API key');
      // The values passed the RFC 3339 check (listQuery), which every runtime's Date reads exactly.
      const from = instant(query.from);
      const to = instant(query.to);
      const filter = { status: query.status, method: query.method?.toUpperCase(), path: query.path };
      // A cursor is bound to the sort, these filters and updated_since: replayed with others → 422 on `cursor`.
      const { request: list, errors } = listRequest({ ...query, sort: query.sort ?? '-occurred_at' }, SORT_TYPES, {
        ...filter,
        from: from?.toISOString(),
        to: to?.toISOString(),
      });
      throwIfInvalid(errors);
      // Records never change: updated_since is another lower bound.
      const since = [from, list.updatedSince].flatMap((d) => (d === undefined ? [] : [d.getTime()]));
      const { page, rows } = await listAuditLogs(db, tenantId, list, {
        ...filter,
        from: since.length > 0 ? new Date(Math.max(...since)) : undefined,
        to,
      });
      return { data: rows, pagination: listPagination(page, list) };
    },
    {
      ...listQuery(AuditQuery, SORTABLE),
      response: { 200: AuditLogListResponse },
      detail: {
        summary: 'List audit log records',
        tags: ['Audit log'],
        description:
          "One record per /v1 request made with this account's key (including refused ones such as 429), newest first (`sort=occurred_at` for oldest first; ties in time by id). Requests without a valid key belong to no account and are not listed here. Records are written in batches, so a request appears within about a second. Page mode (`page`) counts the matching records; cursor mode (`cursor` = `pagination.next_cursor`) continues after the last record returned with the same sort and filters, without counting, and never returns a record twice — the way to follow the log as it grows.",
      },
    },
  );
}
