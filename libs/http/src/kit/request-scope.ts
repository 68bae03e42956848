// The request id rule (contract §6) and what the kit knows about one request. The kit's fetch
// stages hold the scope directly; Elysia's route context reaches it through `scopeOf`, the one
// bridge into Elysia: its context cannot be seeded from outside, and Deno's request headers are
// immutable, so the generated request id cannot travel as a header.
import { Elysia } from 'elysia';

/** Header names shared by the gateway and the services. */
export const headers = {
  tenant: 'x-tenant-id',
  requestId: 'x-request-id',
  internalToken: 'x-internal-token',
} as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The request id rule of contract §6: keep a client UUID, otherwise generate one. */
export function requestIdFrom(value: string | null): string {
  return value && UUID.test(value) ? value : crypto.randomUUID();
}

/** What the kit knows about a request while it is handled. */
export interface RequestScope {
  requestId: string;
  /** Path without the query, parsed once. */
  path: string;
  /** The query with its `?` ('' when there is none), parsed with the path. */
  search: string;
  /** The route pattern that matched (metrics and log label); unset when no route matched. */
  route?: string;
  /** The tenant, when the process itself authenticated the request (the gateway); else the gateway's header names it. */
  tenantId?: string;
  started: number;
  /**
   * Work the kit runs once the answer is made, whatever it is (an error included), e.g. rolling
   * back a keyed write left open. Set only by requests that need it: an Elysia `afterResponse`
   * hook would schedule a callback for every request of every route.
   */
  afterResponse?: () => void;
}

const scopes = new WeakMap<Request, RequestScope>();

/** Opens the scope of a request: its id (kept or generated) and its path. */
export function openScope(request: Request): RequestScope {
  const url = request.url;
  const pathStart = url.indexOf('/', url.indexOf('//') + 2);
  const queryStart = url.indexOf('?', pathStart);
  const scope: RequestScope = {
    requestId: requestIdFrom(request.headers.get(headers.requestId)),
    path: queryStart === -1 ? url.slice(pathStart) : url.slice(pathStart, queryStart),
    search: queryStart === -1 ? '' : url.slice(queryStart),
    started: performance.now(),
  };
  scopes.set(request, scope);
  return scope;
}

/** The scope the kit opened for a request (undefined outside the kit's handler). */
export function scopeOf(request: Request): RequestScope | undefined {
  return scopes.get(request);
}

/** Sets the metrics/log route label of a request handled outside Elysia's router. */
export function setRouteLabel(request: Request, route: string): void {
  const scope = scopes.get(request);
  if (scope) scope.route = route;
}

/** The request id assigned to a request by the kit's handler. */
export function requestIdOf(request: Request): string {
  return scopes.get(request)?.requestId ?? '';
}

/**
 * Request context for route handlers: `requestId`, `tenantId` (from the gateway's headers) and
 * `ifMatch`. Feature plugins `.use()` it for typing; Elysia dedupes it by name.
 */
export const requestContext = new Elysia({ name: 'crm-request-context' }).derive({ as: 'global' }, ({ request, route }) => {
  const scope = scopes.get(request);
  if (scope) scope.route = route;
  return {
    requestId: scope?.requestId ?? '',
    tenantId: scope?.tenantId ?? request.headers.get(headers.tenant) ?? '',
    /** The client's `If-Match` (contract §24), for the service to compare where it locks the resource. */
    ifMatch: request.headers.get('if-match') ?? undefined,
  };
});
