import { notFound } from '@crm/http';
import type { Kysely } from 'kysely';
import type { WebhooksDatabase } from '../db/database.ts';
import { assertEnabled, getWebhook } from '../endpoints/service.ts';
import { findAttempt, queueManualAttempt } from './repo.ts';

/**
 * Queues a manual attempt of one delivery of the tenant's endpoint (404 for an unknown one, 409
 * while the endpoint is disabled) and returns it, pending. `db` is the pool or a keyed write's
 * transaction; the caller wakes the worker once it has committed.
 */
export async function retryDelivery(db: Kysely<WebhooksDatabase>, tenantId: string, endpointId: number, deliveryId: number) {
  const endpoint = await getWebhook(db, tenantId, endpointId);
  const attempt = await findAttempt(db, tenantId, endpoint.id, deliveryId);
  if (!attempt) throw notFound('Delivery');
  assertEnabled(endpoint);
  const queued = await queueManualAttempt(db, attempt.task_id);
  if (!queued) throw notFound('Delivery');
  return queued;
}
