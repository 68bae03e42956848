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

/** Tables of the gateway schema. */
export interface GatewayDatabase {
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
}
