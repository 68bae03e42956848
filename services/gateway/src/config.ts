import { commonServiceEnv, loadConfig, Port, Type } from '@crm/config';
import { GATEWAY_OPS_DEFAULT_PORT } from '@crm/contracts';
import { ORIGIN_PATTERN } from './cors/cors.ts';

const { INTERNAL_TOKEN, ...common } = commonServiceEnv;

export const GatewayEnv = Type.Object({
  ...common,
  INTERNAL_TOKEN,
  HOST: Type.String({ default: '0.0.0.0' }),
  GATEWAY_PORT: Port(8080),
  GATEWAY_OPS_PORT: Type.Integer({
    minimum: 0,
    maximum: 65535,
    default: GATEWAY_OPS_DEFAULT_PORT,
    description:
      'Operations port (plain HTTP, same HOST): /metrics, /livez, /readyz for probes and Prometheus; keep it off the public network. 0 = any free port.',
  }),
  ADMIN_TOKEN: Type.String({ minLength: 16 }),
  SALES_URL: Type.String({ default: 'http://127.0.0.1:8081' }),
  CATALOG_URL: Type.String({ default: 'http://127.0.0.1:8082' }),
  DOCUMENTS_URL: Type.String({ default: 'http://127.0.0.1:8083' }),
  WEBHOOKS_URL: Type.String({ default: 'http://127.0.0.1:8084' }),
  UPSTREAM_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 15_000 }),
  /**
   * How reads (GET, HEAD) and keyed writes with a JSON body or none reach sales, catalog and
   * webhooks: `http1`, the gateway's own keep-alive HTTP/1.1 client (Bun; 20–30 µs of CPU less per
   * read than fetch), or `fetch`. Documents, writes without an Idempotency-Key, https upstreams and
   * Deno always use fetch.
   */
  UPSTREAM_READ_CLIENT: Type.Union([Type.Literal('http1'), Type.Literal('fetch')], { default: 'http1' }),
  /** How long a resolved API key is trusted before it is looked up again (contract §5: at most 5 s). */
  AUTH_CACHE_MS: Type.Integer({ minimum: 0, maximum: 5000, default: 5000 }),
  /** Budget per client address for /v1 requests without a valid key (guards against key guessing). */
  UNAUTHENTICATED_PER_MINUTE: Type.Integer({ minimum: 1, default: 60 }),
  /** An idempotency claim of a dead gateway expires after UPSTREAM_TIMEOUT_MS plus this margin. */
  IDEMPOTENCY_CLAIM_MARGIN_MS: Type.Integer({ minimum: 0, default: 5000 }),
  /**
   * A bucket's rate-limit statements start at least this many milliseconds apart on a replica;
   * the requests arriving meanwhile share the next one (limits stay exact; see the README).
   */
  RATE_LIMIT_COALESCE_MS: Type.Integer({ minimum: 0, maximum: 1000, default: 2 }),
  /** A batch of this many requests of one bucket goes without waiting for the rest of the window (0: off). */
  RATE_LIMIT_FULL_BATCH: Type.Integer({ minimum: 0, maximum: 10_000, default: 16 }),
  AUDIT_FLUSH_MS: Type.Integer({ minimum: 10, default: 500 }),
  AUDIT_BATCH_SIZE: Type.Integer({ minimum: 1, maximum: 5000, default: 500 }),
  /** Memory the audit entries waiting for the database may take; beyond it new entries are dropped and counted. */
  AUDIT_BUFFER_MAX_MB: Type.Integer({ minimum: 1, maximum: 4096, default: 64 }),
  /** Audit records are deleted this many days after they were made. */
  AUDIT_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 36500, default: 90 }),
  /** How often the audit retention purge runs (its first run is 10 s after start, or sooner). */
  AUDIT_PURGE_INTERVAL_MS: Type.Integer({ minimum: 100, default: 600_000 }),
  /** Audit records deleted per purge statement. */
  AUDIT_PURGE_BATCH: Type.Integer({ minimum: 1, maximum: 100_000, default: 1000 }),
  /** How often expired idempotency records (older than 24 h) and refilled rate-limit buckets are deleted. */
  PURGE_INTERVAL_MS: Type.Integer({ minimum: 100, default: 60_000 }),
  TLS_CERT_FILE: Type.Optional(Type.String()),
  TLS_KEY_FILE: Type.Optional(Type.String()),
  /** Unset: required when NODE_ENV=production (contract §10: production default), plain HTTP in development. */
  REQUIRE_HTTPS: Type.Optional(Type.Boolean()),
  NODE_ENV: Type.String({ default: 'development' }),
  TRUSTED_PROXIES: Type.String({ default: '', description: 'Comma-separated proxy IPs allowed to set X-Forwarded-Proto' }),
  CORS_ALLOWED_ORIGINS: Type.String({
    default: '',
    pattern: `^\\s*(${ORIGIN_PATTERN}\\s*(,\\s*${ORIGIN_PATTERN}\\s*)*)?$`,
    description: 'Comma-separated origins (https://host[:port]) whose browser pages may call /v1; empty = no CORS headers at all',
  }),
});

export type GatewayConfig = ReturnType<typeof loadGatewayConfig>;

/** Gateway configuration, parsed once from the environment. */
export const loadGatewayConfig = (env: Record<string, string | undefined> = process.env) => loadConfig(GatewayEnv, env);
