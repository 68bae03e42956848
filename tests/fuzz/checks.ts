// What every answer must satisfy (contract §3, §6, §19), and the stated answers of §19 for
// the input classes that have one.
import type { FuzzCase } from './cases.ts';
import type { WireResponse } from './request.ts';

export const CHECK_NO_5XX = 'status < 500 (§19)';
export const CHECK_ENVELOPE = '4xx carries the error envelope (§3)';
export const CHECK_NOTHING_LEFT = 'refused write leaves nothing behind (§19)';
export const CHECK_ANSWERED = 'every request gets an answer';

/** Error types of the contract (§3, and §24's precondition_failed) with their statuses. */
const ERROR_STATUS: Record<string, number> = {
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
};

export interface Finding {
  check: string;
  detail: string;
}

/** The checks an answer fails (empty when it passes them all). */
export function answerFindings(c: FuzzCase, response: WireResponse, realPath: boolean): Finding[] {
  const findings: Finding[] = [];
  if (response.status >= 500) findings.push({ check: CHECK_NO_5XX, detail: `answered ${response.status}` });
  if (response.status >= 400 && response.status < 500) {
    const problem = envelopeProblem(response);
    if (problem) findings.push({ check: CHECK_ENVELOPE, detail: problem });
  }
  if (c.expect && realPath && !c.expect.statuses.includes(response.status)) {
    findings.push({ check: c.expect.check, detail: `expected ${c.expect.statuses.join(' or ')}, got ${response.status}` });
  }
  return findings;
}

/** Why a 4xx body is not `{ error: { type, message, request_id, details? } }`, or undefined. */
export function envelopeProblem(response: WireResponse): string | undefined {
  const error = response.json?.error;
  if (!error || typeof error !== 'object') return 'body is not a JSON object with an "error" member';
  if (!(error.type in ERROR_STATUS)) return `error.type ${JSON.stringify(error.type)} is not a contract error type`;
  if (ERROR_STATUS[error.type] !== response.status) return `error.type ${error.type} does not belong to status ${response.status}`;
  if (typeof error.message !== 'string' || error.message.length === 0) return 'error.message is missing or empty';
  if (typeof error.request_id !== 'string' || error.request_id.length === 0) return 'error.request_id is missing';
  if (error.request_id !== response.headers.get('x-request-id')) return 'error.request_id differs from the X-Request-ID header (§6)';
  if (error.details !== undefined) {
    const ok =
      Array.isArray(error.details) && error.details.every((d: any) => typeof d?.field === 'string' && typeof d?.message === 'string');
    if (!ok) return 'error.details is not a list of { field, message }';
  }
  return undefined;
}
