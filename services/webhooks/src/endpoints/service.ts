import { newEventId } from '@crm/contracts';
import { AppError, notFound, throwIfInvalid } from '@crm/http';
import type { Kysely } from 'kysely';
import type { WebhooksDatabase } from '../db/database.ts';
import { storeTestEvent } from '../ingest/event-store.ts';
import { newEndpointSecret } from '../signing/signature.ts';
import type { TargetPolicy } from '../ssrf/target-guard.ts';
import type { CreateWebhook, UpdateWebhook } from './model.ts';
import * as repo from './repo.ts';
import { webhookRuleErrors } from './rules.ts';

export interface EndpointServiceDeps {
  db: Kysely<WebhooksDatabase>;
  /** Where webhook URLs may point (contract §20). */
  targetPolicy: TargetPolicy;
  /** Wakes the local delivery worker after a test event is queued. */
  onQueued: () => void;
}

/** How long a rotated-out secret keeps signing alongside the new one. */
export const SECRET_GRACE_MS = 24 * 3600 * 1000;

/** `["*"]` when all types are wanted, else the distinct types in the given order. */
function normalizeEvents(events: string[] | undefined): string[] | undefined {
  if (events === undefined) return undefined;
  return events.includes('*') ? ['*'] : [...new Set(events)];
}

/** Registers an endpoint with a fresh secret. */
export async function createWebhook(deps: EndpointServiceDeps, tenantId: string, body: CreateWebhook) {
  throwIfInvalid(await webhookRuleErrors(body, deps.targetPolicy));
  return repo.insertEndpoint(deps.db, {
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
export async function getWebhook(deps: EndpointServiceDeps, tenantId: string, id: number) {
  const row = await repo.findEndpoint(deps.db, tenantId, id);
  if (!row) throw notFound('Webhook');
  return row;
}

/** Partial update; enabling clears the reason the service disabled it. */
export async function updateWebhook(deps: EndpointServiceDeps, tenantId: string, id: number, body: UpdateWebhook) {
  throwIfInvalid(await webhookRuleErrors(body, deps.targetPolicy));
  const changes = {
    ...(body.url !== undefined ? { url: body.url } : {}),
    ...(body.events !== undefined ? { events: normalizeEvents(body.events) } : {}),
    ...(body.description !== undefined ? { description: body.description } : {}),
    ...(body.enabled !== undefined ? { enabled: body.enabled, disabled_reason: null } : {}),
  };
  const row = await repo.updateEndpoint(deps.db, tenantId, id, changes);
  if (!row) throw notFound('Webhook');
  return row;
}

/** Deletes an endpoint with its queued deliveries and log. */
export async function deleteWebhook(deps: EndpointServiceDeps, tenantId: string, id: number) {
  if (!(await repo.deleteEndpoint(deps.db, tenantId, id))) throw notFound('Webhook');
}

/** A new secret; the old one keeps signing alongside it for 24 h. */
export async function rotateWebhookSecret(deps: EndpointServiceDeps, tenantId: string, id: number) {
  const row = await repo.rotateEndpointSecret(deps.db, tenantId, id, newEndpointSecret(), new Date(Date.now() + SECRET_GRACE_MS));
  if (!row) throw notFound('Webhook');
  return row.secret;
}

/** 409 when the endpoint is disabled: nothing would be sent until it is enabled again. */
export function assertEnabled(endpoint: { enabled: boolean }): void {
  if (!endpoint.enabled) throw new AppError('conflict', 'Webhook is disabled; enable it with PUT { "enabled": true } first');
}

/** Queues a `webhook.test` event for this endpoint only; returns its id. */
export async function sendTestEvent(deps: EndpointServiceDeps, tenantId: string, id: number) {
  const endpoint = await getWebhook(deps, tenantId, id);
  assertEnabled(endpoint);
  const eventId = newEventId();
  await storeTestEvent(deps.db, tenantId, endpoint.id, {
    id: eventId,
    data: { webhook_id: endpoint.id, message: 'This is a test event from the CRM API.' },
  });
  deps.onQueued();
  return eventId;
}
