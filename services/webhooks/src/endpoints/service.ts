import { newEventId } from '@crm/contracts';
import { inTransaction } from '@crm/db';
import { AppError, assertIfMatch, notFound, throwIfInvalid } from '@crm/http';
import type { Kysely, Selectable } from 'kysely';
import type { EndpointsTable, WebhooksDatabase } from '../db/database.ts';
import { storeTestEvent } from '../ingest/event-store.ts';
import { newEndpointSecret } from '../signing/signature.ts';
import type { TargetPolicy } from '../ssrf/target-guard.ts';
import { presentWebhook, presentWebhookWithSecret, type WebhookCreate, type WebhookUpdate } from './model.ts';
import * as repo from './repo.ts';
import { webhookRuleErrors } from './rules.ts';

// Every function takes the database to use first: the pool, or the transaction of a keyed write
// (contract §21), which `inTransaction` joins with a savepoint.
type Db = Kysely<WebhooksDatabase>;

/** How long a rotated-out secret keeps signing alongside the new one. */
export const SECRET_GRACE_MS = 24 * 3600 * 1000;

/** `["*"]` when all types are wanted, else the distinct types in the given order. */
function normalizeEvents(events: string[] | undefined): string[] | undefined {
  if (events === undefined) return undefined;
  return events.includes('*') ? ['*'] : [...new Set(events)];
}

/**
 * Registers an endpoint with a fresh secret. The URL rules run here, after a keyed write found no
 * recorded answer: they resolve the host, and a retry of a committed write must get its answer
 * whatever the name resolves to now.
 */
export async function createWebhook(db: Db, tenantId: string, body: WebhookCreate, targetPolicy: TargetPolicy) {
  throwIfInvalid(await webhookRuleErrors(body, targetPolicy));
  return repo.insertEndpoint(db, {
    tenant_id: tenantId,
    url: body.url,
    description: body.description ?? null,
    events: normalizeEvents(body.events) ?? ['*'],
    enabled: body.enabled ?? true,
    disabled_reason: null,
    secret: newEndpointSecret(),
    previous_secret: null,
    previous_secret_expires_at: null,
  });
}

/** The tenant's endpoint, or 404. */
export async function getWebhook(db: Db, tenantId: string, id: number) {
  const row = await repo.findEndpoint(db, tenantId, id);
  if (!row) throw notFound('Webhook');
  return row;
}

/**
 * `If-Match` (contract §24) against the endpoint as the API presents it now: its `GET` / `PUT`
 * representation, or the creation answer (which also shows the secret) — both name this version.
 * Called on the locked row, so two writers holding one ETag cannot both pass; 412 otherwise.
 */
function assertEndpointIfMatch(ifMatch: string | undefined, row: Selectable<EndpointsTable>): void {
  if (ifMatch === undefined) return;
  try {
    assertIfMatch(ifMatch, presentWebhook(row));
  } catch (error) {
    if (!(error instanceof AppError && error.type === 'precondition_failed')) throw error;
    assertIfMatch(ifMatch, presentWebhookWithSecret(row));
  }
}

/**
 * Partial update; enabling clears the reason the service disabled it. With `ifMatch`, 412 unless
 * it is the endpoint's current ETag (checked under the row lock; a 412 changes nothing).
 */
export async function updateWebhook(
  db: Db,
  tenantId: string,
  id: number,
  body: WebhookUpdate,
  { targetPolicy, ifMatch }: { targetPolicy: TargetPolicy; ifMatch?: string },
) {
  throwIfInvalid(await webhookRuleErrors(body, targetPolicy));
  const changes = {
    ...(body.url !== undefined ? { url: body.url } : {}),
    ...(body.events !== undefined ? { events: normalizeEvents(body.events) } : {}),
    ...(body.description !== undefined ? { description: body.description } : {}),
    ...(body.enabled !== undefined ? { enabled: body.enabled, disabled_reason: null } : {}),
  };
  return inTransaction(db, async (trx) => {
    const current = await repo.lockEndpoint(trx, tenantId, id);
    if (!current) throw notFound('Webhook');
    assertEndpointIfMatch(ifMatch, current);
    const row = await repo.updateEndpoint(trx, tenantId, id, changes);
    if (!row) throw notFound('Webhook');
    return row;
  });
}

/** Deletes an endpoint with its queued deliveries and log; `ifMatch` as for updates. */
export async function deleteWebhook(db: Db, tenantId: string, id: number, ifMatch?: string) {
  await inTransaction(db, async (trx) => {
    const current = await repo.lockEndpoint(trx, tenantId, id);
    if (!current) throw notFound('Webhook');
    assertEndpointIfMatch(ifMatch, current);
    if (!(await repo.deleteEndpoint(trx, tenantId, id))) throw notFound('Webhook');
  });
}

/** A new secret; the old one keeps signing alongside it for 24 h. */
export async function rotateWebhookSecret(db: Db, tenantId: string, id: number) {
  const row = await repo.rotateEndpointSecret(db, tenantId, id, newEndpointSecret(), new Date(Date.now() + SECRET_GRACE_MS));
  if (!row) throw notFound('Webhook');
  return row.secret;
}

/** 409 when the endpoint is disabled: nothing would be sent until it is enabled again. */
export function assertEnabled(endpoint: { enabled: boolean }): void {
  if (!endpoint.enabled) throw new AppError('conflict', 'Webhook is disabled; enable it with PUT { "enabled": true } first');
}

/**
 * Queues a `webhook.test` event for this endpoint only; returns its id. The caller wakes the
 * delivery worker once the write has committed (inside a keyed write it is not visible before).
 */
export async function sendTestEvent(db: Db, tenantId: string, id: number) {
  const endpoint = await getWebhook(db, tenantId, id);
  assertEnabled(endpoint);
  const eventId = newEventId();
  await storeTestEvent(db, tenantId, endpoint.id, {
    id: eventId,
    data: { webhook_id: endpoint.id, message: 'This is a test event from the CRM API.' },
  });
  return eventId;
}
