import { type ServiceName, services } from '@crm/contracts';
import { AppError, errorResponse, type Logger, requestIdOf, setRouteLabel, unavailableError } from '@crm/http';
import type { Kysely } from 'kysely';
import type { AuditRecorder } from './audit/recorder.ts';
import { redactQuery } from './audit/recorder.ts';
import { type Authenticator, type Principal, setPrincipal } from './auth/authenticate.ts';
import type { CorsPolicy } from './cors/cors.ts';
import type { GatewayDatabase } from './db/database.ts';
import type { ServiceUrls } from './health/health.ts';
import { assertHttps, clientIpOf, type TransportPolicy } from './https/transport.ts';
import { idempotencyKeyOf } from './idempotency/fingerprint.ts';
import { runIdempotent } from './idempotency/idempotency.ts';
import { readRequestBody } from './proxy/body.ts';
import { forward } from './proxy/forward.ts';
import { owningService, routeLabel } from './proxy/routing.ts';
import type { RateLimiter } from './rate-limit/limiter.ts';
import { addressBudget, preflightBudget, tenantBudget } from './rate-limit/policy.ts';
import { type RateVerdict, rateLimitedError, rateLimitHeaders } from './rate-limit/verdict.ts';

export interface PublicApiDeps {
  auth: Authenticator;
  limiter: RateLimiter;
  audit: AuditRecorder;
  db: Kysely<GatewayDatabase>;
  logger: Logger;
  transport: TransportPolicy;
  cors: CorsPolicy;
  urls: ServiceUrls;
  internalToken: string;
  upstreamTimeoutMs: number;
  /** How long an idempotency claim outlives a dead owner beyond the upstream timeout. */
  claimMarginMs: number;
  /** Budget per client IP for requests without a valid key (brute-force guard). */
  unauthenticatedPerMinute: number;
  /** Gateway-owned /v1 routes (paths → methods) and the app that serves them. */
  localRoutes: Record<string, string[]>;
  localFetch: (request: Request) => Promise<Response>;
}

/** What the pipeline learns about a request, for headers and the audit record. */
interface RequestFacts {
  requestId: string;
  clientIp: string | undefined;
  principal?: Principal;
  verdict?: RateVerdict;
  idempotencyKey?: string;
  errorType?: string;
}

function withHeaders(response: Response, headers: Record<string, string>): Response {
  try {
    for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
    return response;
  } catch {
    const copy = new Headers(response.headers);
    for (const [name, value] of Object.entries(headers)) copy.set(name, value);
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers: copy });
  }
}

/** Every /v1 answer: per key and possibly personal, so no cache keeps it; never content-sniffed. */
const PUBLIC_HEADERS = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };

/**
 * The headers every /v1 response carries whoever made it — pipeline, service, replay, error
 * (contract §20): PUBLIC_HEADERS, and the CORS headers for an allowed origin.
 */
export function withPublicHeaders(request: Request, response: Response, cors: CorsPolicy): Response {
  const target = withHeaders(response, PUBLIC_HEADERS);
  cors.decorate(request, target.headers);
  return target;
}

/** Reads the error type of a small error body so the audit record can carry it. */
async function readErrorType(response: Response): Promise<{ response: Response; type?: string }> {
  if (!(response.headers.get('content-type') ?? '').includes('json')) return { response };
  const text = await response.text();
  let type: string | undefined;
  try {
    type = JSON.parse(text)?.error?.type;
  } catch {
    type = undefined;
  }
  return { response: new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers }), type };
}

/**
 * The /v1 pipeline, in the contract's order: HTTPS check → CORS preflight → API key (failures
 * spend a per-IP budget) → tenant rate limit → idempotency → forward (or a gateway-owned route) → audit.
 * Every failure becomes the error envelope with the request id; every response carries the
 * rate-limit headers and produces exactly one audit record.
 */
export function createPublicApi(deps: PublicApiDeps) {
  async function admit(request: Request, facts: RequestFacts): Promise<Principal> {
    const principal = await deps.auth.authenticate(request.headers.get('x-api-key'));
    if (!principal) {
      const verdict = await deps.limiter.take(addressBudget(facts.clientIp, deps.unauthenticatedPerMinute));
      facts.verdict = verdict;
      if (!verdict.allowed) throw rateLimitedError(verdict);
      throw new AppError('unauthorized', 'Missing or invalid API key (send it in the x-api-key header)');
    }
    facts.principal = principal;
    setPrincipal(request, principal);
    facts.verdict = await deps.limiter.take(tenantBudget(request.method, principal));
    if (!facts.verdict.allowed) throw rateLimitedError(facts.verdict);
    return principal;
  }

  async function execute(request: Request, path: string, search: string, facts: RequestFacts, principal: Principal) {
    const methods = deps.localRoutes[path];
    if (methods) {
      if (!methods.includes(request.method)) {
        throw new AppError('method_not_allowed', `${request.method} is not allowed on ${path}`, undefined, { allow: methods.join(', ') });
      }
      return deps.localFetch(request);
    }
    const service: ServiceName | undefined = owningService(path);
    if (!service) throw new AppError('not_found', `No route for ${path}`);
    const key = idempotencyKeyOf(request);
    facts.idempotencyKey = key;
    const body = await readRequestBody(request);
    const send = () =>
      forward({
        request,
        baseUrl: deps.urls[service],
        pathAndQuery: path + search,
        body,
        tenantId: principal.tenantId,
        requestId: facts.requestId,
        internalToken: deps.internalToken,
        clientIp: facts.clientIp,
        timeoutMs: deps.upstreamTimeoutMs,
      });
    if (key === undefined) return send();
    return runIdempotent({
      db: deps.db,
      tenantId: principal.tenantId,
      key,
      method: request.method,
      pathAndQuery: path + search,
      body,
      lockMs: deps.upstreamTimeoutMs + deps.claimMarginMs,
      execute: send,
    });
  }

  async function answer(request: Request, path: string, search: string, facts: RequestFacts): Promise<Response> {
    assertHttps(request, deps.transport);
    const preflight = deps.cors.preflight(request);
    if (preflight) {
      // A CORS preflight of an allowed origin carries no key (browsers never send one): answered
      // before authentication, audited, and like every OPTIONS it spends no budget (§7); it shows
      // the address's keyless budget, as a 401 would.
      facts.verdict = await deps.limiter.take(preflightBudget(facts.clientIp, deps.unauthenticatedPerMinute));
      return preflight;
    }
    const principal = await admit(request, facts);
    return execute(request, path, search, facts, principal);
  }

  function errorToResponse(error: unknown, facts: RequestFacts): Response {
    // Its own database unreachable (a PostgreSQL restart): 503 service_unavailable, retryable.
    const unavailable = unavailableError(error);
    if (!(error instanceof AppError) && !unavailable) deps.logger.error('unhandled error', { request_id: facts.requestId, error });
    const appError = error instanceof AppError ? error : (unavailable ?? new AppError('internal_error', 'Internal server error'));
    facts.errorType = appError.type;
    return errorResponse(appError, facts.requestId);
  }

  return async function handlePublic(request: Request, path: string, search: string): Promise<Response> {
    const started = performance.now();
    const occurredAt = new Date();
    const facts: RequestFacts = { requestId: requestIdOf(request), clientIp: clientIpOf(request, deps.transport) };
    setRouteLabel(request, deps.localRoutes[path] ? path : routeLabel(path));
    let response: Response;
    try {
      response = await answer(request, path, search, facts);
    } catch (error) {
      response = errorToResponse(error, facts);
    }
    if (facts.verdict) response = withHeaders(response, rateLimitHeaders(facts.verdict));
    if (response.status >= 400 && facts.errorType === undefined) {
      const read = await readErrorType(response);
      response = read.response;
      facts.errorType = read.type;
    }
    deps.audit.record({
      occurred_at: occurredAt,
      request_id: facts.requestId,
      tenant_id: facts.principal?.tenantId ?? null,
      key_id: facts.principal?.keyId ?? null,
      method: request.method,
      path,
      query: redactQuery(search),
      status: response.status,
      duration_ms: Math.round((performance.now() - started) * 100) / 100,
      client_ip: facts.clientIp ?? null,
      user_agent: request.headers.get('user-agent'),
      idempotency_key: facts.idempotencyKey ?? null,
      replayed: response.headers.get('idempotent-replayed') === 'true',
      error_type: facts.errorType ?? null,
    });
    return response;
  };
}

/** Service base URLs from config. */
export function serviceUrls(config: Record<string, unknown>): ServiceUrls {
  return Object.fromEntries(Object.entries(services).map(([name, s]) => [name, String(config[s.urlEnv])])) as ServiceUrls;
}
