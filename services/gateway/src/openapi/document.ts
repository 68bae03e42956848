import { type ServiceName, serviceNames } from '@crm/contracts';
import { type DescribedRoute, describeRoutes, errorStatus, headers as h, type Logger, OPENAPI_PATH } from '@crm/http';
import { stringify } from 'yaml';
import type { ServiceUrls } from '../health/health.ts';
import { decorateOperation, sharedComponents } from './decorate.ts';
import { attachExamples } from './examples.ts';
import { hoistNamedSchemas } from './named-schemas.ts';
import { hoistSharedParameters } from './shared-parameters.ts';
import { describeTags } from './tags.ts';
import { describeWebhooks, webhookHeaderParameters } from './webhooks.ts';

/** The API version the document describes: the newest release in CHANGELOG.md (a test keeps them in step). */
export const API_VERSION = '1.2.7';

type Paths = Record<string, Record<string, Record<string, any>>>;

const DESCRIPTION = `Multi-tenant CRM API. Every request under \`/v1\` needs the account's API key in the \`x-api-key\` header.

- **Errors** use one envelope: \`{ "error": { "type", "message", "details"?, "request_id" } }\`.
- **Request ids**: send a UUID in \`X-Request-ID\` to correlate; every response carries one.
- **Connections**: keep them alive and reuse them, one request at a time on each; for concurrency open more connections. HTTP/1.1 pipelining
  (a request sent before the answer ahead of it arrived) is not supported: the gateway may close the connection without answering any request on it,
  and a write among them may have been acted on. Send such a write again under its \`Idempotency-Key\` to learn its outcome.
- **Rate limits** per account: reads (GET, HEAD) 120/min, writes (POST, PUT, PATCH, DELETE) 30/min unless the operator changed them,
  exact across gateway replicas (GCRA). Every response has \`RateLimit-Policy\` and \`RateLimit\`; over the limit → 429 \`rate_limited\` with \`Retry-After\`.
  Requests without a valid key are limited per client address.
- **Idempotency**: send \`Idempotency-Key\` on writes to retry safely. The first answer (status < 500, except validation errors and 412) is stored 24 h and
  replayed with \`Idempotent-Replayed: true\`; the same key with another method, path or body → 422 \`idempotency_key_reused\`; while the first request
  runs → 409 \`idempotency_key_in_use\`. Multipart uploads are matched on method and path only.
- **Audit**: every request is recorded (\`GET /v1/audit-logs\`), never with the key.
- **Webhooks**: every change is POSTed, signed (Standard Webhooks), to the endpoints you register; the \`webhooks\` section lists each
  event type's body and the *Webhook events* tag how to verify it. Every request body and answer below has an example the API accepts.

## Lists: page mode and cursor mode

Every list takes \`per_page\` 1..100 (default 15), \`sort=field\` or \`-field\` (ties broken by \`id\`), \`updated_since\` and its own filters,
and answers \`{ "data": [...], "pagination": { total, per_page, current_page, last_page, has_more, next_cursor } }\`.

- **Page mode** (the default, \`page\` from 1): \`total\`, \`current_page\` and \`last_page\` are counted; a page past the end is \`data: []\`.
- **Cursor mode** (opt-in): send \`cursor=<pagination.next_cursor>\` to continue after the last item returned, with the same \`sort\` and filters.
  A cursor page is not counted (\`total\`, \`current_page\`, \`last_page\` are \`null\`); \`next_cursor\` is \`null\` when \`has_more\` is false.
  A walk with cursors returns every item that existed for the whole walk exactly once, whatever is inserted or deleted meanwhile
  (sorted by \`updated_at\`, an item updated during the walk comes again: what an incremental sync wants). A cursor is opaque and bound to
  its sort and filters: with others, malformed, or together with \`page\` → 422 on \`cursor\`.
- **Link** header (RFC 8288) on every list answer, relative to the host and repeating \`per_page\`, \`sort\` and the filters: page mode
  \`rel="first"\`, \`rel="prev"\` (past page 1), \`rel="next"\` (while \`has_more\`) and \`rel="last"\`; cursor mode \`rel="next"\` while \`has_more\`.

## ETags and conditional requests

Every single-resource answer (\`{ "data": {...} }\` of GET, POST, PUT, PATCH) carries a strong \`ETag\` that changes whenever the representation does.

- \`GET\` with \`If-None-Match: <etag>\` → 304 without a body while it is current (still counted as a read).
- \`PUT\`, \`PATCH\`, \`DELETE\` with \`If-Match: <etag>\` → 412 \`precondition_failed\` when the resource changed since, and nothing changes;
  \`If-Match: *\` matches any existing version; a missing resource is still 404. Of two writers holding the same ETag exactly one succeeds.
  Without \`If-Match\` a write proceeds as before.
- With an \`Idempotency-Key\`, a 412 is not stored: retry with the fresh ETag and the same key. A repeat of a key whose write succeeded
  replays the recorded answer (with its \`ETag\`) before \`If-Match\` is looked at.

## Error types

| status | type |
|---|---|
${Object.entries(errorStatus)
  .map(([type, status]) => `| ${status} | \`${type}\` |`)
  .join('\n')}`;

export interface OpenApiSource {
  urls: ServiceUrls;
  internalToken: string;
  logger: Logger;
  /** The gateway's own routes (its Elysia route table). */
  ownRoutes: () => DescribedRoute[];
  /** How long a service's description is reused before it is asked again. */
  cacheMs?: number;
}

/**
 * Builds the one OpenAPI 3.1 document of the public API: each service describes its /v1
 * routes from its TypeBox schemas (GET /internal/openapi.json); the gateway merges them with
 * its own routes and adds security, shared headers and error responses. A service that does
 * not answer contributes its last known description.
 */
export function createOpenApiDocument(source: OpenApiSource) {
  const cacheMs = source.cacheMs ?? 10_000;
  const known = new Map<ServiceName, { paths: Paths; fetchedAt: number }>();

  async function servicePaths(name: ServiceName): Promise<Paths> {
    const cached = known.get(name);
    if (cached && Date.now() - cached.fetchedAt < cacheMs) return cached.paths;
    try {
      const response = await fetch(source.urls[name] + OPENAPI_PATH, {
        headers: { [h.internalToken]: source.internalToken },
        signal: AbortSignal.timeout(5000),
      });
      if (!response.ok) throw new Error(`status ${response.status}`);
      const { paths } = (await response.json()) as { paths: Paths };
      known.set(name, { paths, fetchedAt: Date.now() });
      return paths;
    } catch (error) {
      source.logger.warn('service description unavailable', { service: name, error: String(error) });
      return cached?.paths ?? {};
    }
  }

  async function build(): Promise<Record<string, unknown>> {
    const parts = await Promise.all(serviceNames.map(servicePaths));
    const merged: Paths = {};
    for (const paths of [describeRoutes(source.ownRoutes()), ...parts]) {
      for (const [path, item] of Object.entries(paths)) merged[path] = { ...merged[path], ...structuredClone(item) };
    }
    const sorted: Paths = {};
    for (const path of Object.keys(merged).sort()) {
      sorted[path] = merged[path] as Paths[string];
      for (const [method, operation] of Object.entries(sorted[path] as Paths[string]))
        decorateOperation(method, path, operation, sorted[path] as Paths[string]);
    }
    const components = sharedComponents();
    Object.assign(components.parameters, webhookHeaderParameters());
    const described: { paths: Paths; webhooks: Paths } = { paths: sorted, webhooks: describeWebhooks() };
    const conflicts = hoistNamedSchemas(described, components.schemas);
    if (conflicts.length > 0) source.logger.warn('schemas described differently under one name', { names: conflicts });
    const { paths, webhooks } = described;
    const operations = [...Object.values(paths), ...Object.values(webhooks)];
    attachExamples(operations, components);
    hoistSharedParameters(Object.values(paths), components.parameters);
    return {
      openapi: '3.1.0',
      info: {
        title: 'CRM API',
        version: API_VERSION,
        description: DESCRIPTION,
        // The repository is private and ships no licence: all rights reserved.
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
        contact: { name: 'CRM API maintainers' },
      },
      servers: [{ url: '/', description: 'This gateway (paths include the /v1 prefix)' }],
      security: [{ ApiKey: [] }],
      tags: describeTags(operations.flatMap((item) => Object.values(item).flatMap((op) => op.tags ?? []))),
      paths,
      webhooks,
      components,
    };
  }

  return {
    build,
    /** The document as YAML (what GET /openapi/v1.yaml serves). */
    async yaml(): Promise<string> {
      return stringify(await build(), { aliasDuplicateObjects: false });
    },
  };
}
