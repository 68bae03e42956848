// How the webhooks tests read an endpoint's delivery log: as a client does, through
// GET /v1/webhooks/{id}/deliveries. Attempts are logged after the receiver answered, so a test
// waits for the log to show what it expects.
import { pollUntil, type TestTenant } from '@crm/testing';

/** The endpoint's delivery log now (its first page, of up to 100 attempts). */
export async function deliveries(tenant: TestTenant, webhookId: number): Promise<any[]> {
  return (await tenant.request('GET', `/v1/webhooks/${webhookId}/deliveries?per_page=100`)).body.data;
}

/** The endpoint's delivery log once `done` holds, read every 100 ms for up to `timeoutMs`. */
export function deliveriesUntil(tenant: TestTenant, webhookId: number, done: (rows: any[]) => boolean, timeoutMs = 15_000): Promise<any[]> {
  return pollUntil(`the delivery log of webhook ${webhookId}`, () => deliveries(tenant, webhookId), done, { timeoutMs });
}
