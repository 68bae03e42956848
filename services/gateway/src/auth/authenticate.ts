import type { Kysely } from 'kysely';
import type { NatsConnection } from 'nats';
import type { GatewayDatabase } from '../db/database.ts';
import { hashApiKey, looksLikeApiKey } from '../tenants/api-key.ts';
import { findTenantByKeyHash } from '../tenants/repo.ts';
import { TENANT_CHANGED_SUBJECT } from '../tenants/service.ts';

export interface Principal {
  tenantId: string;
  keyId: string;
  readPerMinute: number;
  writePerMinute: number;
}

/**
 * Resolves `x-api-key` to a tenant. Hits are cached for at most `cacheMs` (≤ 5 s) and evicted
 * on every replica as soon as a key rotation or limit change is announced on NATS. The cache is
 * keyed by the presented key itself (process memory only), so a hit costs no SHA-256; the
 * database only ever sees and stores the hash.
 */
export function createAuthenticator(db: Kysely<GatewayDatabase>, nc: NatsConnection, cacheMs: number) {
  const cache = new Map<string, { principal: Principal; expires: number }>();
  const subscription = nc.subscribe(TENANT_CHANGED_SUBJECT, {
    callback: (_err, msg) => {
      const tenantId = msg.string();
      for (const [key, entry] of cache) if (entry.principal.tenantId === tenantId) cache.delete(key);
    },
  });

  /** The principal of a key cached and still fresh, without a promise (the hot path); undefined otherwise. */
  function cached(apiKey: string | null): Principal | undefined {
    if (!apiKey) return undefined;
    const hit = cache.get(apiKey);
    return hit && hit.expires > Date.now() ? hit.principal : undefined;
  }

  async function authenticate(apiKey: string | null): Promise<Principal | undefined> {
    if (!apiKey || !looksLikeApiKey(apiKey)) return undefined;
    const now = Date.now();
    const hit = cache.get(apiKey);
    if (hit && hit.expires > now) return hit.principal;
    const row = await findTenantByKeyHash(db, await hashApiKey(apiKey));
    if (!row) {
      cache.delete(apiKey);
      return undefined;
    }
    const principal = { tenantId: row.id, keyId: row.key_id, readPerMinute: row.read_per_minute, writePerMinute: row.write_per_minute };
    if (cacheMs > 0) {
      if (cache.size > 50_000) cache.clear();
      cache.set(apiKey, { principal, expires: now + cacheMs });
    }
    return principal;
  }

  return { cached, authenticate, stop: async () => subscription.unsubscribe() };
}

export type Authenticator = ReturnType<typeof createAuthenticator>;
