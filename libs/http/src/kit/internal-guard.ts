// Stage: only the gateway may call a service (contract §1): the internal credential, and the
// tenant context on every /v1 call. Probes and listed open paths stay reachable.
import { timingSafeEqual } from 'node:crypto';
import { AppError } from '../errors.ts';
import { headers, type RequestScope } from './request-scope.ts';

/** Compares a presented credential in constant time (no timing oracle on the internal token). */
function sameSecret(presented: string | null, expected: Buffer): boolean {
  if (presented === null) return false;
  const a = Buffer.from(presented);
  return a.length === expected.length && timingSafeEqual(a, expected);
}

/** A guard returning the refusal for a request, or undefined to let it through. */
export function internalGuard(internalToken: string, openPaths: ReadonlySet<string>) {
  const expected = Buffer.from(internalToken);
  return (request: Request, scope: RequestScope): AppError | undefined => {
    if (openPaths.has(scope.path)) return undefined;
    if (!sameSecret(request.headers.get(headers.internalToken), expected))
      return new AppError('unauthorized', 'Missing or invalid internal credential');
    if (scope.path.startsWith('/v1/') && !request.headers.get(headers.tenant))
      return new AppError('unauthorized', 'Missing tenant context');
    return undefined;
  };
}
