// Stage: every failure becomes the contract's error envelope (§3) — the one switch from what
// went wrong to the answer. Unknown errors are 500 internal_error, logged with the request id.
import { Elysia } from 'elysia';
import { AppError, errorResponse, unavailableError, validationError } from '../errors.ts';
import { expandUnions } from '../input/validate.ts';
import type { Logger } from '../logger.ts';
import { validationDetails } from '../validation.ts';
import { scopeOf } from './request-scope.ts';

/** The answer to an error thrown outside any more specific mapping (also used by the fetch stages). */
export function unexpectedErrorResponse(error: unknown, requestId: string, logger: Logger): Response {
  const unavailable = unavailableError(error);
  if (unavailable) {
    logger.warn('dependency unavailable', { request_id: requestId, error: error instanceof Error ? error.message : String(error) });
    return errorResponse(unavailable, requestId);
  }
  logger.error('unhandled error', { request_id: requestId, error });
  return errorResponse(new AppError('internal_error', 'Internal server error'), requestId);
}

function mapError(code: string | number, error: unknown, requestId: string, logger: Logger): Response {
  if (error instanceof AppError) return errorResponse(error, requestId);
  if (code === 'VALIDATION') {
    // A path parameter that fails its schema (`/contacts/{id}` with id 0 or 2^31) names no
    // resource: not found. Elysia reports a failed integer coercion of a path id as 'property'.
    const on = (error as { type?: string }).type;
    if (on === 'params' || on === 'property') return errorResponse(new AppError('not_found', 'Not found'), requestId);
    const all = (error as { all?: Parameters<typeof expandUnions>[0] }).all ?? [];
    return errorResponse(validationError(validationDetails(expandUnions(all))), requestId);
  }
  if (code === 'PARSE') {
    // Elysia wraps what a parse hook throws; our JSON reader's own 400/422 is the cause.
    const cause = (error as { cause?: unknown }).cause;
    return errorResponse(cause instanceof AppError ? cause : new AppError('bad_request', 'Malformed JSON body'), requestId);
  }
  if (code === 'NOT_FOUND') return errorResponse(new AppError('not_found', 'No such route'), requestId);
  return unexpectedErrorResponse(error, requestId, logger);
}

/** The error-mapping plugin. */
export function errorMapper(service: string, logger: Logger) {
  return new Elysia({ name: `crm-error-mapper-${service}` }).onError({ as: 'global' }, ({ code, error, request }) =>
    mapError(code, error, scopeOf(request)?.requestId ?? crypto.randomUUID(), logger),
  );
}
