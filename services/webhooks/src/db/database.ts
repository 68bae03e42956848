import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface EndpointsTable {
  id: Generated<number>;
  tenant_id: string;
  url: string;
  description: string | null;
  events: string[];
  enabled: Generated<boolean>;
  disabled_reason: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface EventsTable {
  id: string;
  tenant_id: string;
  type: string;
  data: unknown;
  occurred_at: Timestamp;
  received_at: Generated<Date>;
  /** Position in the JetStream stream; null for `webhook.test` events and events stored before 0003. */
  seq: number | null;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface DeliveryTasksTable {
  id: Generated<number>;
  tenant_id: string;
  event_id: string;
  endpoint_id: number;
  status: Generated<DeliveryStatus>;
  attempts: Generated<number>;
  next_attempt_at: Generated<Date>;
  /** A manual retry's pending attempt row, filled in when the worker makes the attempt. */
  queued_attempt_id: number | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface DeliveryAttemptsTable {
  id: Generated<number>;
  tenant_id: string;
  task_id: number;
  endpoint_id: number;
  event_id: string;
  event_type: string;
  attempt: number;
  status: DeliveryStatus;
  status_code: number | null;
  error: string | null;
  response_excerpt: string | null;
  duration_ms: number | null;
  created_at: Generated<Date>;
  next_attempt_at: Date | null;
}

/** Tables of the webhooks schema. */
export interface WebhooksDatabase {
  endpoints: EndpointsTable;
  events: EventsTable;
  delivery_tasks: DeliveryTasksTable;
  delivery_attempts: DeliveryAttemptsTable;
}
