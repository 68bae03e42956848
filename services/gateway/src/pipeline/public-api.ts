import type { ServiceName } from '@crm/contracts';
import { AppError, ERROR_TYPE_HEADER, errorResponse, type Logger, registerCounter, unavailableError } from '@crm/http';
import { idempotencyKeyOf, requestFingerprint } from '@crm/idempotency';
import type { Http1Client } from '@crm/runtime';
import type { Kysely } from 'kysely';
import type { AuditEntry, AuditRecorder } from '../audit/recorder.ts';
import { redactQuery } from '../audit/recorder.ts';
import type { Authenticator, Principal } from '../auth/authenticate.ts';
import type { CorsPolicy } from '../cors/cors.ts';
import type { GatewayDatabase } from '../db/database.ts';
import type { ServiceUrls } from '../health/health.ts';
import { assertHttps, type TransportPolicy } from '../https/transport.ts';
import { runIdempotent } from '../idempotency/idempotency.ts';
import { CLAIM_WITH_GRANT, RETENTION_HOURS } from '../idempotency/store.ts';
import { type RequestBody, readRequestBody } from '../proxy/body.ts';
import { type Cancellable, forward } from '../proxy/forward.ts';
import type { RateLimiter } from '../rate-limit/limiter.ts';
import { addressBudget, type Budget, preflightBudget, tenantBudget } from '../rate-limit/policy.ts';
import { rateLimitedError, rateLimitHeaders } from '../rate-limit/verdict.ts';
import type { GatewayRequest } from './context.ts';
import { withHeaders, withPublicHeaders } from './headers.ts';

export interface PublicApiDeps {
  auth: Authenticator;
  limiter: RateLimiter;
  audit: AuditRecorder;
  db: Kysely<GatewayDatabase>;
  logger: Logger;
  transport: TransportPolicy;
  cors: CorsPolicy;
  urls: ServiceUrls;
  /** Per service, the client its reads and keyed JSON writes go through when not fetch (UPSTREAM_READ_CLIENT). */
  upstreamClients: Partial<Record<ServiceName, Http1Client>>;
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

const ignore = () => {};

/** The request's Idempotency-Key, or undefined when it has none or an invalid one (refused after its grant, in `route`). */
function validKeyOf(request: Request): string | undefined {
  try {
    return idempotencyKeyOf(request);
  } catch {
    return undefined;
  }
}

/** Reads forwarded while their grant was on the way, and how many of them the grant refused (or failed to give). */
let readsAhead = 0;
let readsAheadRefused = 0;
registerCounter('gateway_reads_ahead_of_grant_total', 'Reads forwarded while their rate-limit grant was on the way', () => readsAhead);
registerCounter(
  'gateway_reads_ahead_refused_total',
  'Reads forwarded ahead of a grant that then refused them or failed (their answer was dropped)',
  () => readsAheadRefused,
);

/** The body of a GET or HEAD, which is never read. */
const NO_BODY: RequestBody = { kind: 'none' };

/**
 * The /v1 pipeline, in the contract's order. Each stage takes the request's context
 * (`GatewayRequest`) and adds what it learns:
 *   1. transport — HTTPS required (§10); a CORS preflight of an allowed origin is answered here (§20)
 *   2. API key — a missing or unknown key spends the address budget: 401, then 429 (§5, §7)
 *   3. rate limit — the tenant budget the method spends (§7)
 *   4. route — a gateway-owned route, or idempotency (§8) around the forward to the owning service
 *      (a read whose bucket has room is forwarded while its grant is on the way; the grant decides)
 *   5. answer — RateLimit headers, the error type learnt from X-Error-Type, the public headers (§20)
 *   6. audit — one record per request (§9)
 * Every failure becomes the error envelope with the request id.
 */
export function createPublicApi(deps: PublicApiDeps) {
  /**
   * Stage 1: HTTPS (throws), then the answer to an allowed CORS preflight, which needs no key;
   * undefined otherwise (synchronously: the common case awaits nothing).
   */
  function transport(ctx: GatewayRequest): Promise<Response> | undefined {
    assertHttps(ctx.request, deps.transport);
    const preflight = deps.cors.preflight(ctx.request);
    return preflight ? answerPreflight(ctx, preflight) : undefined;
  }

  async function answerPreflight(ctx: GatewayRequest, preflight: Response): Promise<Response> {
    // Browsers never send a key on a preflight: like every OPTIONS it spends no budget (§7) and
    // shows the address's keyless budget, as a 401 would.
    ctx.verdict = await deps.limiter.take(preflightBudget(ctx.clientIp, deps.unauthenticatedPerMinute));
    return preflight;
  }

  /** Stage 2: the principal of the request's API key; key guessing is throttled per address. */
  async function authenticate(ctx: GatewayRequest, apiKey: string | null): Promise<Principal> {
    const principal = await deps.auth.authenticate(apiKey);
    if (principal) {
      ctx.principal = principal;
      return principal;
    }
    ctx.verdict = await deps.limiter.take(addressBudget(ctx.clientIp, deps.unauthenticatedPerMinute));
    if (!ctx.verdict.allowed) throw rateLimitedError(ctx.verdict);
    throw new AppError('unauthorized', 'Missing or invalid API key (send it in the x-api-key header)');
  }

  /** Stage 3: spends the tenant budget of the request's method (OPTIONS only looks). */
  async function limit(ctx: GatewayRequest, budget: Budget): Promise<void> {
    ctx.verdict = await deps.limiter.take(budget);
    if (!ctx.verdict.allowed) throw rateLimitedError(ctx.verdict);
  }

  /**
   * Stages 3 and 4 for a read the bucket will very likely grant (GET or HEAD to a service, the
   * replica's last grant for the bucket left room): the read is forwarded while its grant is on
   * the way, so the answer waits for the slower of the two instead of both in turn. The grant
   * still decides: refused (or failed), the read's answer is dropped unseen and aborted, and the
   * client gets the 429 (or 503) exactly as if the read had never been sent. A write, or a read
   * whose bucket is near its limit, waits for its grant first, so a client over its limit never
   * makes a service work.
   */
  async function limitAlongsideRead(ctx: GatewayRequest, principal: Principal, budget: Budget): Promise<Response> {
    readsAhead += 1;
    const cancel: Cancellable = {};
    const read = route(ctx, principal, cancel);
    // Handled here, so that a failure while the grant is still on the way is not "unhandled".
    read.catch(ignore);
    try {
      await limit(ctx, budget);
    } catch (error) {
      readsAheadRefused += 1;
      cancel.controller?.abort();
      read.then((response) => response.body?.cancel().catch(ignore), ignore);
      throw error;
    }
    return read;
  }

  /** Stage 4: a gateway-owned route, or the owning service (under the Idempotency-Key, if any). */
  async function route(
    ctx: GatewayRequest,
    principal: Principal,
    cancel?: Cancellable,
    claimed?: { body: RequestBody; attempted: { fingerprint: string; token: string; won: boolean } },
  ): Promise<Response> {
    const methods = deps.localRoutes[ctx.path];
    if (methods) {
      if (!methods.includes(ctx.method)) {
        throw new AppError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}`, undefined, { allow: methods.join(', ') });
      }
      // The gateway-owned route reads the verified tenant from the kit's scope (`tenantId` in its context).
      ctx.scope.tenantId = principal.tenantId;
      return deps.localFetch(ctx.request);
    }
    const service: ServiceName | undefined = ctx.service;
    if (!service) throw new AppError('not_found', `No route for ${ctx.path}`);
    ctx.idempotencyKey = idempotencyKeyOf(ctx.request);
    const method = ctx.method;
    const body = claimed?.body ?? (method === 'GET' || method === 'HEAD' ? NO_BODY : await readRequestBody(ctx.request));
    const pathAndQuery = ctx.path + ctx.search;
    const send = () =>
      forward({
        request: ctx.request,
        baseUrl: deps.urls[service],
        pathAndQuery,
        body,
        tenantId: principal.tenantId,
        requestId: ctx.requestId,
        internalToken: deps.internalToken,
        clientIp: ctx.clientIp,
        timeoutMs: deps.upstreamTimeoutMs,
        cancel,
        client: deps.upstreamClients[service],
        keyed: ctx.idempotencyKey !== undefined,
      });
    if (ctx.idempotencyKey === undefined) return send();
    return runIdempotent({
      db: deps.db,
      tenantId: principal.tenantId,
      key: ctx.idempotencyKey,
      method: ctx.method,
      pathAndQuery,
      body,
      lockMs: deps.upstreamTimeoutMs + deps.claimMarginMs,
      execute: send,
      attempted: claimed?.attempted,
    });
  }

  /**
   * Stages 3 and 4 for a write to a service with a valid Idempotency-Key: its body is read and
   * fingerprinted first, then its grant and its key's claim go as ONE statement (the claim only
   * when the grant passed: limits still come before idempotency, §7). A body the gateway refuses
   * (400, 413) is answered after the grant, as on every other path, so an over-limit client
   * still gets its 429 first.
   */
  async function limitAndClaim(ctx: GatewayRequest, principal: Principal, budget: Budget, key: string): Promise<Response> {
    let body: RequestBody;
    try {
      body = await readRequestBody(ctx.request);
    } catch (error) {
      await limit(ctx, budget);
      throw error;
    }
    const fingerprint = await requestFingerprint(ctx.method, ctx.path + ctx.search, body);
    const token = crypto.randomUUID();
    const lockMs = deps.upstreamTimeoutMs + deps.claimMarginMs;
    const { verdict, row } = await deps.limiter.takeWith(budget, CLAIM_WITH_GRANT, [
      principal.tenantId,
      key,
      fingerprint,
      token,
      lockMs,
      RETENTION_HOURS,
    ]);
    ctx.verdict = verdict;
    if (!verdict.allowed) {
      if (body.kind === 'multipart') await body.stream.cancel().catch(ignore);
      throw rateLimitedError(verdict);
    }
    return route(ctx, principal, undefined, { body, attempted: { fingerprint, token, won: row.claim_token === token } });
  }

  async function respond(ctx: GatewayRequest): Promise<Response> {
    const preflight = transport(ctx);
    if (preflight) return preflight;
    const apiKey = ctx.request.headers.get('x-api-key');
    // A key in the authenticator's cache needs no promise; anything else goes the whole way.
    const known = deps.auth.cached(apiKey);
    if (known) ctx.principal = known;
    const principal = known ?? (await authenticate(ctx, apiKey));
    const budget = tenantBudget(ctx.method, principal);
    const method = ctx.method;
    const toService = ctx.service !== undefined && !deps.localRoutes[ctx.path];
    if ((method === 'GET' || method === 'HEAD') && toService && deps.limiter.likelyAllows(budget))
      return limitAlongsideRead(ctx, principal, budget);
    if (toService && budget.policy === 'write') {
      const key = validKeyOf(ctx.request);
      if (key !== undefined) return limitAndClaim(ctx, principal, budget, key);
    }
    await limit(ctx, budget);
    return route(ctx, principal);
  }

  function failure(ctx: GatewayRequest, error: unknown): Response {
    // Its own database unreachable (a PostgreSQL restart): 503 service_unavailable, retryable.
    const unavailable = unavailableError(error);
    if (!(error instanceof AppError) && !unavailable) deps.logger.error('unhandled error', { request_id: ctx.requestId, error });
    const appError = error instanceof AppError ? error : (unavailable ?? new AppError('internal_error', 'Internal server error'));
    return errorResponse(appError, ctx.requestId);
  }

  /** Stage 5: what every answer carries; the error type is read before the header is removed. */
  function answer(ctx: GatewayRequest, response: Response): Response {
    const limited = ctx.verdict ? withHeaders(response, rateLimitHeaders(ctx.verdict)) : response;
    ctx.errorType = limited.headers.get(ERROR_TYPE_HEADER) ?? undefined;
    return withPublicHeaders(ctx.request, limited, deps.cors, ctx.errorType !== undefined);
  }

  /** Stage 6: the audit record (written in batches, off the request's path). */
  function auditEntry(ctx: GatewayRequest, response: Response): AuditEntry {
    return {
      occurred_at: ctx.occurredAt,
      request_id: ctx.requestId,
      tenant_id: ctx.principal?.tenantId ?? null,
      key_id: ctx.principal?.keyId ?? null,
      method: ctx.method,
      path: ctx.path,
      query: redactQuery(ctx.search),
      status: response.status,
      duration_ms: Math.round((performance.now() - ctx.started) * 100) / 100,
      client_ip: ctx.clientIp ?? null,
      user_agent: ctx.request.headers.get('user-agent'),
      idempotency_key: ctx.idempotencyKey ?? null,
      replayed: response.headers.get('idempotent-replayed') === 'true',
      error_type: ctx.errorType ?? null,
    };
  }

  return async function handlePublic(ctx: GatewayRequest): Promise<Response> {
    let response: Response;
    try {
      response = await respond(ctx);
    } catch (error) {
      response = failure(ctx, error);
    }
    response = answer(ctx, response);
    deps.audit.record(auditEntry(ctx, response));
    return response;
  };
}
