import { signatureHeader } from '../signing/signature.ts';
import type { ClaimedTask } from './task-queue.ts';

export const USER_AGENT = 'crm-webhooks/1.0';

/** The secrets that sign now: the current one, plus the previous one during its grace period. */
export function signingSecrets(
  task: Pick<ClaimedTask, 'secret' | 'previous_secret' | 'previous_secret_expires_at'>,
  now = new Date(),
): string[] {
  const previousValid = task.previous_secret && task.previous_secret_expires_at && task.previous_secret_expires_at > now;
  return previousValid ? [task.secret, task.previous_secret as string] : [task.secret];
}

/**
 * The Standard Webhooks request for one attempt: body `{ id, type, timestamp, data }`, and
 * `webhook-id` (the event id, the same on every attempt), `webhook-timestamp` (this attempt)
 * and `webhook-signature` headers.
 */
export function buildWebhookRequest(task: ClaimedTask, now = new Date()): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify({ id: task.event_id, type: task.type, timestamp: new Date(task.occurred_at).toISOString(), data: task.data });
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'webhook-id': task.event_id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(signingSecrets(task, now), task.event_id, timestamp, body),
    },
  };
}
