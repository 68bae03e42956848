/** Every error type of the contract (§3) with its HTTP status; the one switch from type to status. */
export const errorStatus = {
  bad_request: 400,
  unauthorized: 401,
  https_required: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  idempotency_key_in_use: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  validation_error: 422,
  idempotency_key_reused: 422,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
  upstream_timeout: 504,
} as const;

export type ErrorType = keyof typeof errorStatus;

export interface ErrorDetail {
  field: string;
  message: string;
}

/** The one error services throw; the http kit turns it into the contract's envelope. */
export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly type: ErrorType,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppError';
    this.status = errorStatus[type];
  }
}

/** A 422 validation_error whose message names every failing field. */
export function validationError(details: ErrorDetail[]): AppError {
  const message = `The given data was invalid: ${details.map((d) => `${d.field} ${d.message}`).join('; ')}`;
  return new AppError('validation_error', message, details);
}

/**
 * Error codes that mean a backing service (PostgreSQL, storage) cannot be reached right now:
 * socket errors, and PostgreSQL's admin/crash shutdown, "cannot connect now", too many
 * connections and connection-exception SQLSTATEs.
 */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
]);
/** The pg driver's own words for a connection that is gone or could not be had in time. */
const UNAVAILABLE_MESSAGES = /Connection terminated|not queryable|timeout exceeded when trying to connect|Client was closed/i;

/**
 * A 503 service_unavailable when `error` says a backing service (the database during a restart,
 * storage) is unreachable, so clients get the retryable answer quickly instead of a 500; undefined
 * for any other error.
 */
export function unavailableError(error: unknown): AppError | undefined {
  if (error instanceof AppError) return undefined;
  const e = error as { code?: unknown; message?: unknown; cause?: unknown };
  const matches = (x: { code?: unknown; message?: unknown } | undefined) =>
    (typeof x?.code === 'string' && UNAVAILABLE_CODES.has(x.code)) ||
    (typeof x?.message === 'string' && UNAVAILABLE_MESSAGES.test(x.message));
  if (!matches(e) && !matches(e?.cause as { code?: unknown; message?: unknown } | undefined)) return undefined;
  return new AppError('service_unavailable', 'The service cannot reach its database or storage right now; retry later');
}

/** A 404 not_found for a resource kind. */
export function notFound(what: string): AppError {
  return new AppError('not_found', `${what} not found`);
}

/** Builds the contract's error envelope body. */
export function errorBody(type: ErrorType, message: string, requestId: string, details?: ErrorDetail[]) {
  return { error: { type, message, ...(details && details.length > 0 ? { details } : {}), request_id: requestId } };
}

/** Header that names the error type of an error answer, so the gateway need not parse the body. */
export const ERROR_TYPE_HEADER = 'x-error-type';

/** A JSON Response carrying the error envelope, with the request id and error type headers. */
export function errorResponse(error: AppError, requestId: string): Response {
  return new Response(JSON.stringify(errorBody(error.type, error.message, requestId, error.details)), {
    status: error.status,
    headers: { 'content-type': 'application/json', 'x-request-id': requestId, [ERROR_TYPE_HEADER]: error.type, ...error.headers },
  });
}
