import type { ErrorDetail, ErrorType } from './types.ts';

/** What a failed answer said, read from the error envelope of contract §3. */
export interface CrmApiErrorInit {
  status: number;
  /** A documented type, or `http_error` when the answer carried no envelope (e.g. a proxy's 502 page). */
  type: ErrorType | 'http_error';
  message: string;
  details?: ErrorDetail[];
  requestId: string | null;
  /** Seconds the server asked to wait (`Retry-After`), when it said. */
  retryAfter?: number | null;
  method: string;
  path: string;
  /** How many attempts were made before giving up (1 = no retry). */
  attempts: number;
}

/** An HTTP error answer of the API, with everything the envelope carries. */
export class CrmApiError extends Error {
  override name = 'CrmApiError';
  readonly status: number;
  readonly type: CrmApiErrorInit['type'];
  readonly details: ErrorDetail[];
  readonly requestId: string | null;
  readonly retryAfter: number | null;
  readonly method: string;
  readonly path: string;
  readonly attempts: number;

  constructor(init: CrmApiErrorInit) {
    super(`${init.method} ${init.path} → ${init.status} ${init.type}: ${init.message}`);
    this.status = init.status;
    this.type = init.type;
    this.details = init.details ?? [];
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter ?? null;
    this.method = init.method;
    this.path = init.path;
    this.attempts = init.attempts;
  }
}

/** 412 `precondition_failed`: the `If-Match` ETag is no longer current and nothing changed (contract §24). */
export class PreconditionFailedError extends CrmApiError {
  override name = 'PreconditionFailedError';
}

/** The request never got an answer (network error or per-attempt timeout), after every retry allowed. */
export class CrmNetworkError extends Error {
  override name = 'CrmNetworkError';
  readonly method: string;
  readonly path: string;
  readonly attempts: number;

  constructor(method: string, path: string, attempts: number, cause: unknown) {
    super(`${method} ${path}: no answer after ${attempts} attempt(s): ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
    this.method = method;
    this.path = path;
    this.attempts = attempts;
  }
}

/** A webhook request that does not carry a valid Standard Webhooks signature (or is too old or new). */
export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

/** Builds the typed error of a failed answer from its status, headers and body text. */
export function apiErrorOf(
  status: number,
  headers: Headers,
  text: string,
  context: { method: string; path: string; attempts: number; retryAfter: number | null },
): CrmApiError {
  let envelope: { type?: unknown; message?: unknown; details?: unknown; request_id?: unknown } | undefined;
  try {
    envelope = (JSON.parse(text) as { error?: typeof envelope })?.error;
  } catch {
    envelope = undefined;
  }
  const init: CrmApiErrorInit = {
    status,
    type: typeof envelope?.type === 'string' ? (envelope.type as ErrorType) : 'http_error',
    message: typeof envelope?.message === 'string' ? envelope.message : text.slice(0, 200) || `HTTP ${status}`,
    details: Array.isArray(envelope?.details) ? (envelope.details as ErrorDetail[]) : [],
    requestId: typeof envelope?.request_id === 'string' ? envelope.request_id : headers.get('x-request-id'),
    ...context,
  };
  return init.type === 'precondition_failed' ? new PreconditionFailedError(init) : new CrmApiError(init);
}
