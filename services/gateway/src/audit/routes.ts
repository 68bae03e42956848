import { Pagination, paginationOf } from '@crm/db';
import { AppError, validationError } from '@crm/http';
import { Elysia, t } from 'elysia';
import type { Kysely } from 'kysely';
import { principalOf } from '../auth/authenticate.ts';
import type { GatewayDatabase } from '../db/database.ts';
import { listAuditLogs } from './repo.ts';

const DateTime = (description: string) => t.String({ format: 'date-time', description });

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
  user_agent: t.Nullable(t.String()),
  idempotency_key: t.Nullable(t.String()),
  replayed: t.Boolean(),
  error_type: t.Nullable(t.String()),
});

const AuditQuery = t.Object(
  {
    per_page: t.Optional(t.Integer({ minimum: 1, maximum: 100, default: 15, description: 'Items per page, 1..100' })),
    page: t.Optional(t.Integer({ minimum: 1, default: 1, description: 'Page number, from 1' })),
    from: t.Optional(DateTime('Only records at or after this time')),
    to: t.Optional(DateTime('Only records before this time')),
    status: t.Optional(t.Integer({ minimum: 100, maximum: 599, description: 'Exact HTTP status' })),
    method: t.Optional(t.String({ description: 'HTTP method, e.g. POST' })),
    path: t.Optional(t.String({ description: 'Exact path, or a prefix ending in `*` (e.g. `/v1/contacts*`)' })),
  },
  { additionalProperties: true },
);

function parseTime(field: string, value: string | undefined, errors: { field: string; message: string }[]): Date | undefined {
  if (value === undefined) return undefined;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) errors.push({ field, message: 'must be an ISO 8601 timestamp' });
  return date;
}

/** GET /v1/audit-logs (contract §9): the calling tenant's own records, newest first. */
export function auditRoutes(db: Kysely<GatewayDatabase>) {
  return new Elysia({ name: 'gateway-audit' }).get(
    '/v1/audit-logs',
    async ({ query, request }) => {
      const principal = principalOf(request);
      if (!principal) throw new AppError('unauthorized', 'Missing or invalid API key');
      const errors: { field: string; message: string }[] = [];
      const from = parseTime('from', query.from, errors);
      const to = parseTime('to', query.to, errors);
      if (errors.length > 0) throw validationError(errors);
      const perPage = query.per_page ?? 15;
      const page = query.page ?? 1;
      const { total, rows } = await listAuditLogs(db, principal.tenantId, {
        from,
        to,
        status: query.status,
        method: query.method?.toUpperCase(),
        path: query.path,
        limit: perPage,
        offset: (page - 1) * perPage,
      });
      return { data: rows, pagination: paginationOf(total, perPage, page) };
    },
    {
      query: AuditQuery,
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
