// Retention of webhook delivery attempts (issue 16): the delivery log goes with its event, 30 days
// (EVENTS_RETENTION_DAYS) after the event, deleted by the webhooks service's events purge
// (services/webhooks/src/feed/purge.ts; the events themselves are covered by the retention test of
// tests/events-feed.test.ts). Here real deliveries with several attempts each are aged, and the
// attempts and tasks of the expired events must be gone from the table and from
// GET /v1/webhooks/{id}/deliveries, while those of newer events stay.
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { pollUntil, type Receiver, type Stack, startReceiver, startStack, type TestTenant } from '@crm/testing';

let stack: Stack;
let receiver: Receiver;

beforeAll(async () => {
  // The purge every 300 ms, two events per statement; a failed attempt is retried after 0.2 s.
  stack = await startStack({
    env: {
      EVENTS_PURGE_INTERVAL_MS: '300',
      EVENTS_PURGE_BATCH: '2',
      WEBHOOK_RETRY_SCHEDULE: '0.2,0.2',
      WEBHOOK_RETRY_JITTER: '0',
      WEBHOOK_POLL_MS: '50',
    },
  });
  // The first POST of each event fails, the second succeeds: every delivery logs two attempts.
  const seen = new Set<string>();
  receiver = await startReceiver({
    reply: (hook) => {
      const id = String(hook.headers['webhook-id']);
      if (seen.has(id)) return { status: 204 };
      seen.add(id);
      return { status: 500, body: 'try again' };
    },
  });
}, 180_000);

afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
}, 60_000);

test('delivery attempts and tasks of events older than 30 days are purged with them; newer ones stay, listed as before', async () => {
  const t: TestTenant = await stack.createTenant();
  const hook = await t.request('POST', '/v1/webhooks', { body: { url: `${receiver.url}/retention`, events: ['contact.created'] } });
  expect(hook.status).toBe(201);
  const webhookId = hook.body.data.id;
  for (let i = 0; i < 5; i++) {
    const res = await t.request('POST', '/v1/contacts', { body: { name: `Retained ${i}`, type: 'client' } });
    expect(res.status).toBe(201);
  }

  // Every event delivered after one failed attempt: ten attempts in the log.
  const attempts = async (eventIds: string[]) =>
    (
      await stack.sql<{ event_id: string; n: number }>(
        'select event_id, count(*)::int as n from webhooks.delivery_attempts where event_id = any($1::text[]) group by event_id',
        [eventIds],
      )
    ).rows;
  const delivered = async () => {
    const { rows } = await stack.sql<{ event_id: string }>(
      `select event_id from webhooks.delivery_tasks where tenant_id = $1 and status = 'delivered' order by id`,
      [t.tenantId],
    );
    const ids = rows.map((r) => r.event_id);
    return { events: ids, attempts: await attempts(ids) };
  };
  const { events } = await pollUntil(
    'five events delivered, each after two attempts',
    delivered,
    (d) => d.events.length === 5 && d.attempts.every((r) => r.n === 2),
    { timeoutMs: 21_000 },
  );
  const log = async () => {
    const res = await t.request('GET', `/v1/webhooks/${webhookId}/deliveries?per_page=100`);
    expect(res.status).toBe(200);
    return res.body.data as { id: number; event_id: string; attempt: number; status: string }[];
  };
  const before = await log();
  expect(before).toHaveLength(10);

  // Three events age past the retention (with their tasks and attempts), one to 29 days, one stays new.
  const expired = events.slice(0, 3);
  const kept = events.slice(3);
  const age = (ids: string[], days: number) =>
    Promise.all([
      stack.sql(`update webhooks.events set occurred_at = now() - make_interval(days => $2) where id = any($1::text[])`, [ids, days]),
      stack.sql(`update webhooks.delivery_tasks set created_at = now() - make_interval(days => $2) where event_id = any($1::text[])`, [
        ids,
        days,
      ]),
      stack.sql(`update webhooks.delivery_attempts set created_at = now() - make_interval(days => $2) where event_id = any($1::text[])`, [
        ids,
        days,
      ]),
    ]);
  await age(expired, 31);
  await age(kept.slice(0, 1), 29);

  await pollUntil(
    'the purge of the expired delivery attempts',
    () => attempts(expired),
    (rows) => rows.length === 0,
    { timeoutMs: 16_000 },
  );
  const tasks = await stack.sql('select count(*)::int as n from webhooks.delivery_tasks where event_id = any($1::text[])', [expired]);
  expect(tasks.rows[0].n).toBe(0);
  const events31 = await stack.sql('select count(*)::int as n from webhooks.events where id = any($1::text[])', [expired]);
  expect(events31.rows[0].n).toBe(0);
  // The newer events keep their two attempts each, and the log lists exactly those.
  expect((await attempts(kept)).map((r) => r.n)).toEqual([2, 2]);
  const after = await log();
  expect(after.map((d) => d.id).sort()).toEqual(
    before
      .filter((d) => kept.includes(d.event_id))
      .map((d) => d.id)
      .sort(),
  );
  // A purged attempt cannot be retried: it is gone.
  const purged = before.find((d) => expired.includes(d.event_id));
  const retry = await t.request('POST', `/v1/webhooks/${webhookId}/deliveries/${purged?.id}/retry`);
  expect(retry.status).toBe(404);
}, 90_000);
