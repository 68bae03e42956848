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

export interface ContactTypesTable {
  id: Generated<number>;
  tenant_id: string;
  reference: string;
  name: string;
  created_at: Timestamp;
}

export interface ContactsTable {
  id: Generated<number>;
  tenant_id: string;
  name: string;
  type: string;
  email: string | null;
  is_person: boolean | null;
  cif: string | null;
  phone: string | null;
  web: string | null;
  iban: string | null;
  comments: string | null;
  extra_fields: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ContactLocationsTable {
  id: Generated<number>;
  contact_id: number;
  primary: number | null;
  direction: string | null;
  city: string | null;
  postal: string | null;
  country: string | null;
  latitude: string | null;
  longitude: string | null;
  extra_info: string | null;
}

export interface ContactUsersTable {
  contact_id: number;
  user_id: number;
  position: number;
}

export interface OpportunitiesTable {
  id: Generated<number>;
  tenant_id: string;
  name: string;
  enterprise_id: number;
  user_id: number | null;
  amount: ColumnType<string, number | undefined, number>;
  currency: Generated<string>;
  status: Generated<string>;
  probability: number | null;
  close_date: string | null;
  comments: string | null;
  extra_fields: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Money and quantities: Postgres `numeric`, read as exact decimal strings. */
type Decimal = ColumnType<string, string, string>;

export interface OrderReferenceCountersTable {
  tenant_id: string;
  next_value: number;
}

export interface OrdersTable {
  id: Generated<number>;
  tenant_id: string;
  reference: string;
  enterprise_id: number;
  user_id: number;
  opportunity_id: number | null;
  date_limit: string;
  state: number;
  comments: string | null;
  extra_fields: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  total: ColumnType<string, string | undefined, string>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface OrderLinesTable {
  id: Generated<number>;
  order_id: number;
  position: number;
  product_id: number;
  reference: string;
  name: string;
  rate_sku: string | null;
  cost: Decimal;
  price: Decimal;
  discount: Decimal;
  quantity: Decimal;
  comment: string | null;
  description: string | null;
}

export interface OrderStatesTable {
  id: Generated<number>;
  order_id: number;
  state: number;
  amount: Decimal;
  created_at: Timestamp;
}

/** Tables of the sales schema. */
export interface SalesDatabase {
  users: UsersTable;
  order_reference_counters: OrderReferenceCountersTable;
  orders: OrdersTable;
  order_lines: OrderLinesTable;
  order_states: OrderStatesTable;
  contact_types: ContactTypesTable;
  contacts: ContactsTable;
  contact_locations: ContactLocationsTable;
  contact_users: ContactUsersTable;
  opportunities: OpportunitiesTable;
}
