import { isEventType } from '@crm/contracts';
import { type ErrorDetail, isPlainObject } from '@crm/http';
import type { TargetPolicy } from '../ssrf/target-guard.ts';
import { checkWebhookUrl } from '../ssrf/webhook-url.ts';

/**
 * The rules of a webhook body that its schema cannot express: `url` must meet the URL rules and
 * the SSRF policy (contract §20; it may resolve the host), every `events[i]` must be a known event
 * type or `*`. Tolerates malformed input (it also runs when the schema failed, so one 422 names
 * every field); what is not a string is left to the schema.
 */
export async function webhookRuleErrors(body: unknown, targetPolicy: TargetPolicy): Promise<ErrorDetail[]> {
  if (!isPlainObject(body)) return [];
  const details = typeof body.url === 'string' ? await checkWebhookUrl(body.url, targetPolicy) : [];
  if (Array.isArray(body.events)) {
    body.events.forEach((type, i) => {
      if (typeof type === 'string' && type !== '*' && !isEventType(type))
        details.push({ field: `events[${i}]`, message: 'is not a known event type (see GET /webhooks/event-types)' });
    });
  }
  return details;
}
