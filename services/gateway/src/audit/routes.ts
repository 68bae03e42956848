import { listQueryWith, Pagination, pageRequest, paginationOf } from '@crm/db';
import { AppError, listQuery, throwIfInvalid } from '@crm/http';
import { Elysia, t } from 'elysia';
import type { Kysely } from 'kysely';
import { principalOf } from '../auth/authenticate.ts';
import type { GatewayDatabase } from '../db/database.ts';
import { listAuditLogs } from './repo.ts';

/** Records are listed by time only: the index is (tenant_id, occurred_at, id). */
const SORTABLE = ['occurred_at'] as const;

/** The HTTP methods (RFC 9110, RFC 5789) a `method` filter may name, in any letter case. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT'] as const;
const anyCase = (word: string) => [...word].map((c) => `[${c}${c.toLowerCase()}]`).join('');

const AuditLog = t.Object({
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
});

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
  return new Elysia({ name: 'gateway-audit' }).get(
    '/v1/audit-logs',
    async ({ query, request }) => {
      const principal = principalOf(request);
      if (!principal) throw new AppError('unauthorized', 'Missing or invalid API key');
      const { request: page, errors } = pageRequest({ ...query, sort: query.sort ?? '-occurred_at' }, SORTABLE);
      throwIfInvalid(errors);
      // The values passed the RFC 3339 check (listQuery), which every runtime's Date reads exactly.
      const since = [query.from, query.updated_since].flatMap((v) => (v === undefined ? [] : [new Date(v).getTime()]));
      const { total, rows } = await listAuditLogs(db, principal.tenantId, page, {
        from: since.length > 0 ? new Date(Math.max(...since)) : undefined,
        to: query.to === undefined ? undefined : new Date(query.to),
        status: query.status,
        method: query.method?.toUpperCase(),
        path: query.path,
      });
      return { data: rows, pagination: paginationOf(total, page.perPage, page.page) };
    },
    {
      ...listQuery(AuditQuery, SORTABLE),
      response: { 200: t.Object({ data: t.Array(AuditLog), pagination: Pagination }) },
      detail: {
        summary: 'List audit log records',
        tags: ['Audit log'],
        description:
          "One record per /v1 request made with this account's key (including refused ones such as 429), newest first. Requests without a valid key belong to no account and are not listed here. Records are written in batches, so a request appears within about a second.",
      },
    },
  );
}
