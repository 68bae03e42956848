import { startStack } from '@crm/testing';

export interface Limits {
  read_per_minute: number;
  write_per_minute: number;
}

/** A tenant as handed to the k6 scripts (`TENANTS` env, JSON). */
export interface LoadTenant {
  tenant_id: string;
  api_key: string;
  user_email: string;
  limits: Limits;
}

/** What the load tests run against: a gateway URL and the operator token to provision tenants. */
export interface Target {
  gatewayUrl: string;
  adminToken: string;
  /** Whether this script started the stack (and stops it). */
  owned: boolean;
  /** SQL on the stack's database when this script started it; undefined for an external stack. */
  sql?: (text: string, params?: unknown[]) => Promise<{ rows: any[] }>;
  stop(): Promise<void>;
}

/** Generous limits for the load tenants, so the mixed scenarios measure the service, not the limiter. */
export const raisedLimits: Limits = { read_per_minute: 1_000_000, write_per_minute: 1_000_000 };

/**
 * The stack to load: the running one when GATEWAY_URL and ADMIN_TOKEN are set (e.g. `npm start`),
 * otherwise a fresh one started here (own database, stream and bucket; removed by stop()).
 */
export async function acquireTarget(log: (m: string) => void): Promise<Target> {
  const { GATEWAY_URL, ADMIN_TOKEN } = process.env;
  if (GATEWAY_URL && ADMIN_TOKEN) {
    log(`using the running stack at ${GATEWAY_URL}`);
    return { gatewayUrl: GATEWAY_URL.replace(/\/$/, ''), adminToken: ADMIN_TOKEN, owned: false, stop: async () => {} };
  }
  log('starting a stack of its own (set GATEWAY_URL and ADMIN_TOKEN to use a running one)…');
  const stack = await startStack({ env: { LOG_LEVEL: 'warn' } });
  log(`stack ready: gateway ${stack.gatewayUrl}, logs in ${stack.logDir}`);
  return { gatewayUrl: stack.gatewayUrl, adminToken: stack.adminToken, owned: true, sql: stack.sql, stop: () => stack.stop() };
}

/** Creates a tenant through the admin API; `limits` undefined keeps the platform defaults. */
export async function provisionTenant(
  target: Pick<Target, 'gatewayUrl' | 'adminToken'>,
  name: string,
  limits?: Limits,
): Promise<LoadTenant> {
  const email = `loadtest-${crypto.randomUUID().slice(0, 8)}@example.test`;
  const response = await fetch(`${target.gatewayUrl}/admin/tenants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${target.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, users: [{ email, name: 'Load Tester' }], ...(limits ? { limits } : {}) }),
  });
  const text = await response.text();
  if (response.status !== 201) throw new Error(`creating tenant ${name} failed: ${response.status} ${text}`);
  const { data } = JSON.parse(text) as { data: { tenant_id: string; api_key: string; limits?: Limits } };
  const effective = data.limits ?? limits ?? { read_per_minute: 120, write_per_minute: 30 };
  return { tenant_id: data.tenant_id, api_key: data.api_key, user_email: email, limits: effective };
}
