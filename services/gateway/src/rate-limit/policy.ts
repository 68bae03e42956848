// Which budget a /v1 request spends (contract §7), and the name of its bucket. One row per bucket
// in `rate_limits`, shared by every replica.

/** The policies a client sees in `RateLimit-Policy`: a tenant's two budgets, and an address's. */
export type PolicyName = 'read' | 'write' | 'ip';

/** A budget a request draws on: its bucket, the policy it is reported as, and its limit per minute. */
export interface Budget {
  bucket: string;
  policy: PolicyName;
  limit: number;
  /** False for requests that are not counted (OPTIONS): the budget is shown, not spent. */
  spends: boolean;
}

/** A tenant's limits, as the API key resolves them. */
export interface TenantLimits {
  tenantId: string;
  readPerMinute: number;
  writePerMinute: number;
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The tenant budget of an authenticated request: writes (POST, PUT, PATCH, DELETE) spend the write
 * budget, everything else the read budget; OPTIONS is not counted, it only shows the read budget.
 */
export function tenantBudget(method: string, tenant: TenantLimits): Budget {
  const write = WRITES.has(method);
  return {
    bucket: `tenant:${tenant.tenantId}:${write ? 'write' : 'read'}`,
    policy: write ? 'write' : 'read',
    limit: write ? tenant.writePerMinute : tenant.readPerMinute,
    spends: method !== 'OPTIONS',
  };
}

/**
 * The budget of a client address, spent by every request without a valid key whatever its method
 * (§7: 401s count against an IP-based limit), so key guessing is throttled.
 */
export function addressBudget(clientIp: string | undefined, perMinute: number): Budget {
  return { bucket: `ip:${clientIp ?? 'unknown'}`, policy: 'ip', limit: perMinute, spends: true };
}

/** A CORS preflight of an allowed origin: keyless and not counted, it shows the address's budget. */
export function preflightBudget(clientIp: string | undefined, perMinute: number): Budget {
  return { ...addressBudget(clientIp, perMinute), spends: false };
}
