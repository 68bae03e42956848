import { AppError } from './errors.ts';
import { headers } from './kit/request-scope.ts';

export interface InternalCall {
  tenantId: string;
  requestId: string;
  body?: unknown;
  query?: Record<string, string>;
}

export interface InternalResponse<T> {
  status: number;
  body: T;
}

/**
 * A small HTTP client for another service's /internal API: sends the internal credential,
 * tenant and request id; maps a refused connection to 503 service_unavailable and a slow
 * answer to 504 upstream_timeout.
 */
export function createInternalClient({
  service,
  baseUrl,
  token,
  timeoutMs = 5000,
}: {
  service: string;
  baseUrl: string;
  token: string;
  timeoutMs?: number;
}) {
  return async function callService<T>(method: string, path: string, call: InternalCall): Promise<InternalResponse<T>> {
    const query = call.query ? `?${new URLSearchParams(call.query)}` : '';
    let response: Response;
    try {
      response = await fetch(`${baseUrl}${path}${query}`, {
        method,
        headers: {
          [headers.internalToken]: token,
          [headers.tenant]: call.tenantId,
          [headers.requestId]: call.requestId,
          ...(call.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: call.body === undefined ? undefined : JSON.stringify(call.body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
        throw new AppError('upstream_timeout', `The ${service} service did not answer in time`);
      }
      throw new AppError('service_unavailable', `The ${service} service is unavailable`);
    }
    if (response.status >= 500) {
      await response.body?.cancel();
      throw new AppError('service_unavailable', `The ${service} service is unavailable`);
    }
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
  };
}

export type InternalClient = ReturnType<typeof createInternalClient>;
