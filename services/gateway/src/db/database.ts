import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface TenantsTable {
  id: string;
  name: string;
  read_per_minute: number;
  write_per_minute: number;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

export interface ApiKeysTable {
  id: string;
  tenant_id: string;
  key_hash: string;
  prefix: string;
  created_at: Generated<Date>;
  revoked_at: Date | null;
}

export interface RateLimitsTable {
  bucket: string;
  tat_ms: number;
  allowed: boolean;
  /** What the last grant of release 1.2.0–1.2.4 started from (migration 0008: read back by its `returning`). */
  base_ms: number | null;
  /** How many the last grant passed (read back by `returning`). */
  granted: number | null;
  /** The bucket as an anchor plus whole intervals, a float8 (migration 0010; rate-limit/gcra.ts `Bucket`). */
  anchor_ms: number | null;
  intervals: number | null;
}

export interface IdempotencyKeysTable {
  tenant_id: string;
  key: string;
  fingerprint: string;
  claim_token: string | null;
  locked_until: Date | null;
  status: number | null;
  headers: Record<string, string> | null;
  body: Uint8Array | null;
  created_at: Generated<Date>;
}

export interface AuditLogsTable {
  id: Generated<string>;
  occurred_at: Date;
  request_id: string;
  tenant_id: string | null;
  key_id: string | null;
  method: string;
  path: string;
  query: string | null;
  status: number;
  duration_ms: number;
  client_ip: string | null;
  user_agent: string | null;
  idempotency_key: string | null;
  replayed: boolean;
  error_type: string | null;
}

/** Tables of the gateway schema. */
export interface GatewayDatabase {
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
  rate_limits: RateLimitsTable;
  idempotency_keys: IdempotencyKeysTable;
  audit_logs: AuditLogsTable;
}
