// Stage: one metric observation and one structured log line per request, labelled by route
// pattern (bounded: a request that matched no route is `unmatched`).
import type { Logger } from '../logger.ts';
import type { HttpMetrics } from '../metrics.ts';
import { headers, type RequestScope } from './request-scope.ts';

/** Method label values; a runtime that accepts any method token must not grow the series. */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Records a finished request; probes are counted but not logged. */
export function accessLog(metrics: HttpMetrics, logger: Logger, quietPaths: ReadonlySet<string>) {
  return (request: Request, scope: RequestScope, status: number): void => {
    const seconds = (performance.now() - scope.started) / 1000;
    const route = scope.route ?? (quietPaths.has(scope.path) ? scope.path : 'unmatched');
    metrics.observe(KNOWN_METHODS.has(request.method) ? request.method : 'OTHER', route, status, seconds);
    if (quietPaths.has(scope.path) || logger.enabled?.('info') === false) return;
    logger.info('request', {
      request_id: scope.requestId,
      tenant_id: request.headers.get(headers.tenant) ?? undefined,
      method: request.method,
      path: scope.path,
      route,
      status,
      duration_ms: Math.round(seconds * 1000 * 100) / 100,
    });
  };
}
