/**
 * What the gateway adds to every operation the services describe: the API-key security, the
 * request headers it understands, the rate-limit and request-id response headers, and the
 * error responses the gateway itself can produce (contract §2, §3, §6–§8); and what the service
 * kit adds to every answer of a kind (§22, §24): `Link` on list pages, `ETag` on single resources,
 * `If-None-Match` → 304 on their GET, `If-Match` → 412 on their PUT/PATCH/DELETE.
 */
import { errorStatus } from '@crm/http';

type Json = Record<string, any>;

const errorRef = (name: string) => ({ $ref: `#/components/responses/${name}` });

const ERROR_RESPONSES: Record<string, { name: string; description: string }> = {
  400: { name: 'BadRequest', description: 'Malformed JSON, wrong Content-Type or malformed Idempotency-Key (`bad_request`)' },
  401: { name: 'Unauthorized', description: 'Missing, unknown or rotated API key (`unauthorized`)' },
  403: { name: 'HttpsRequired', description: 'Plain HTTP while HTTPS is enforced (`https_required`)' },
  404: { name: 'NotFound', description: 'Unknown resource or route, or a resource of another account (`not_found`)' },
  409: {
    name: 'Conflict',
    description: '`conflict`, or `idempotency_key_in_use` (with Retry-After) while the first request with this key runs',
  },
  412: {
    name: 'PreconditionFailed',
    description: '`If-Match` does not match the current ETag (`precondition_failed`): nothing changed; read the resource again and retry',
  },
  413: { name: 'PayloadTooLarge', description: 'JSON body over 1 MB or upload over 20 MB (`payload_too_large`)' },
  422: { name: 'Unprocessable', description: '`validation_error` (every failing field in `details`) or `idempotency_key_reused`' },
  429: { name: 'RateLimited', description: 'Over the read or write limit (`rate_limited`); wait `Retry-After` seconds' },
  500: { name: 'InternalError', description: 'A bug; reported with the request id (`internal_error`)' },
  503: { name: 'ServiceUnavailable', description: 'An upstream service is down or not ready (`service_unavailable`)' },
  504: { name: 'UpstreamTimeout', description: 'An upstream service did not answer in time (`upstream_timeout`)' },
};

const RESPONSE_HEADERS = {
  'X-Request-ID': { $ref: '#/components/headers/RequestId' },
  'RateLimit-Policy': { $ref: '#/components/headers/RateLimitPolicy' },
  RateLimit: { $ref: '#/components/headers/RateLimit' },
};

/** Components shared by every operation: error envelope, security scheme, headers, parameters, error responses. */
export function sharedComponents(): Json {
  const responses: Json = {};
  for (const { name, description } of Object.values(ERROR_RESPONSES)) {
    responses[name] = {
      description,
      headers: {
        ...RESPONSE_HEADERS,
        ...(name === 'RateLimited' || name === 'Conflict' ? { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } } : {}),
      },
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }
  responses.NotModified = {
    description: '`If-None-Match` holds the current ETag: the representation has not changed since (no body; still counted as a read)',
    headers: { ...RESPONSE_HEADERS, ETag: { $ref: '#/components/headers/ETag' } },
  };
  return {
    securitySchemes: {
      ApiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'The account key, `crm_` + 43 characters' },
    },
    schemas: {
      Error: {
        type: 'object',
        required: ['error'],
        properties: {
          error: {
            type: 'object',
            required: ['type', 'message', 'request_id'],
            properties: {
              type: {
                type: 'string',
                enum: Object.keys(errorStatus),
                description: 'Machine-readable error type (each comes with one status; see the table in the description)',
              },
              message: { type: 'string' },
              details: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['field', 'message'],
                  properties: { field: { type: 'string' }, message: { type: 'string' } },
                },
              },
              request_id: { type: 'string', format: 'uuid' },
            },
          },
        },
      },
    },
    parameters: {
      IdempotencyKey: {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description: 'Makes a write safe to retry: 1–255 printable ASCII characters, kept 24 h per account.',
        schema: { type: 'string', minLength: 1, maxLength: 255 },
      },
      IfNoneMatch: {
        name: 'If-None-Match',
        in: 'header',
        required: false,
        description: 'The ETag you hold: when it is still current the answer is 304 without a body.',
        schema: { type: 'string' },
      },
      IfMatch: {
        name: 'If-Match',
        in: 'header',
        required: false,
        description:
          'The ETag of the version you read (or `*` for any existing version): when the resource has changed since, the write is refused with 412 `precondition_failed` and nothing changes. Without it the write proceeds.',
        schema: { type: 'string' },
      },
      RequestId: {
        name: 'X-Request-ID',
        in: 'header',
        required: false,
        description: 'A UUID to correlate the request; kept when valid, otherwise generated. Echoed on the response.',
        schema: { type: 'string', format: 'uuid' },
      },
    },
    headers: {
      RequestId: { description: 'The request id (also in `error.request_id`)', schema: { type: 'string', format: 'uuid' } },
      RateLimitPolicy: { description: 'The budget that applies, e.g. `"read";q=120;w=60`', schema: { type: 'string' } },
      RateLimit: { description: 'What is left, e.g. `"read";r=119;t=1` (remaining, seconds to full reset)', schema: { type: 'string' } },
      RetryAfter: { description: 'Seconds to wait before retrying', schema: { type: 'integer', minimum: 0 } },
      ETag: {
        description:
          'Strong validator of this representation of the resource; changes whenever the representation does. Send it back in `If-None-Match` (GET) or `If-Match` (PUT, PATCH, DELETE).',
        schema: { type: 'string' },
      },
      Link: {
        description:
          'RFC 8288 links to other pages, relative to the host, repeating `per_page`, `sort` and the filters: page mode `rel="first"`, `rel="prev"` (past page 1), `rel="next"` (while `has_more`), `rel="last"`; cursor mode `rel="next"` with the next cursor while `has_more`.',
        schema: { type: 'string' },
      },
      IdempotentReplayed: {
        description: '`true` when this is a stored answer to an earlier request with the same Idempotency-Key',
        schema: { type: 'string', enum: ['true'] },
      },
    },
    responses,
  };
}

const WRITE = new Set(['post', 'put', 'patch', 'delete']);
const CONDITIONAL_WRITE = new Set(['put', 'patch', 'delete']);

/** The JSON schema of a 2xx answer of an operation. */
function successSchemas(operation: Json | undefined): Json[] {
  return Object.entries<Json>(operation?.responses ?? {})
    .filter(([status]) => Number(status) >= 200 && Number(status) < 300)
    .map(([, response]) => response.content?.['application/json']?.schema)
    .filter(Boolean);
}

/** A list page: `{ data: [...], pagination }` (the kit adds `Link`). */
const isListSchema = (schema: Json) => Boolean(schema.properties?.pagination) && schema.properties?.data?.type === 'array';
/** A single resource: `{ data: {...} }` (the kit adds `ETag`). */
const isSingleSchema = (schema: Json) => {
  const data = schema.properties?.data;
  return Boolean(data) && !schema.properties?.pagination && data.type !== 'array';
};

/** What kind of answers an operation gives, as far as the kit's headers go. */
export interface OperationKind {
  list: boolean;
  single: boolean;
  /** A PUT/PATCH/DELETE of a resource whose path also answers a single-resource GET. */
  conditionalWrite: boolean;
}

/** Classifies an operation of a path item (`item` holds its sibling methods). */
export function operationKind(method: string, path: string, operation: Json, item: Json): OperationKind {
  const schemas = successSchemas(operation);
  const readable = successSchemas(item.get).some(isSingleSchema);
  return {
    list: method === 'get' && schemas.some(isListSchema),
    single: schemas.some(isSingleSchema),
    conditionalWrite: CONDITIONAL_WRITE.has(method) && path.includes('{') && readable,
  };
}

function errorStatuses(method: string, path: string, operation: Json, kind: OperationKind): string[] {
  const statuses = ['401', '403', '429', '500', '503', '504'];
  const hasInput = operation.requestBody || (operation.parameters ?? []).some((p: Json) => p.in === 'query');
  if (path !== '/v1/health') statuses.push('404');
  if (WRITE.has(method)) statuses.push('400', '409', '413', '422');
  else if (hasInput) statuses.push('422');
  if (kind.conditionalWrite) statuses.push('412');
  return statuses;
}

/** Adds the gateway's parameters, headers and error responses to one operation (in place). */
export function decorateOperation(method: string, path: string, operation: Json, item: Json = {}): void {
  const kind = operationKind(method, path, operation, item);
  const refs = [{ $ref: '#/components/parameters/RequestId' }];
  if (WRITE.has(method)) refs.push({ $ref: '#/components/parameters/IdempotencyKey' });
  if (method === 'get' && kind.single) refs.push({ $ref: '#/components/parameters/IfNoneMatch' });
  if (kind.conditionalWrite) refs.push({ $ref: '#/components/parameters/IfMatch' });
  operation.parameters = [...(operation.parameters ?? []), ...refs];
  for (const [status, response] of Object.entries<Json>(operation.responses ?? {})) {
    if (Number(status) >= 400) continue;
    const schema = response.content?.['application/json']?.schema;
    response.headers = {
      ...response.headers,
      ...RESPONSE_HEADERS,
      ...(schema && isSingleSchema(schema) ? { ETag: { $ref: '#/components/headers/ETag' } } : {}),
      ...(method === 'get' && schema && isListSchema(schema) ? { Link: { $ref: '#/components/headers/Link' } } : {}),
      ...(WRITE.has(method) ? { 'Idempotent-Replayed': { $ref: '#/components/headers/IdempotentReplayed' } } : {}),
    };
  }
  if (method === 'get' && kind.single) operation.responses['304'] = { $ref: '#/components/responses/NotModified' };
  for (const status of errorStatuses(method, path, operation, kind)) {
    const { name } = ERROR_RESPONSES[status] as { name: string };
    operation.responses[status] = errorRef(name);
  }
}
