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

/** A 404 not_found for a resource kind. */
export function notFound(what: string): AppError {
  return new AppError('not_found', `${what} not found`);
}

/** Builds the contract's error envelope body. */
export function errorBody(type: ErrorType, message: string, requestId: string, details?: ErrorDetail[]) {
  return { error: { type, message, ...(details && details.length > 0 ? { details } : {}), request_id: requestId } };
}

/** A JSON Response carrying the error envelope, with the request id header. */
export function errorResponse(error: AppError, requestId: string): Response {
  return new Response(JSON.stringify(errorBody(error.type, error.message, requestId, error.details)), {
    status: error.status,
    headers: { 'content-type': 'application/json', 'x-request-id': requestId, ...error.headers },
  });
}
