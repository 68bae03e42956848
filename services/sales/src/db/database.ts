import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface UsersTable {
  id: Generated<number>;
  tenant_id: string;
  email: string;
  name: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Tables of the sales schema. */
export interface SalesDatabase {
  users: UsersTable;
}
