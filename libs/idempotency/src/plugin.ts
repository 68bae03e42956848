import { requestContext, scopeOf } from '@crm/http';
import { Elysia } from 'elysia';
import type { Kysely } from 'kysely';
import { type FingerprintBody, IDEMPOTENT_METHODS, idempotencyKeyOf, requestFingerprint } from './fingerprint.ts';
import { RequestWrite, replayAnswer } from './request-write.ts';

/** The body as the kit parsed it: JSON, `null` for a route that reads its own (multipart) stream, or none. */
function fingerprintBody(body: unknown): FingerprintBody {
  if (body === undefined) return { kind: 'none' };
  if (body === null) return { kind: 'multipart' };
  return { kind: 'json', value: body };
}

function pathAndQuery(url: string): string {
  const pathStart = url.indexOf('/', url.indexOf('//') + 2);
  return url.slice(pathStart);
}

/**
 * Exactly-once writes for a service (contract §21): every handler gets `write.db`, the database
 * to use; a POST/PUT/PATCH/DELETE that carries the gateway's Idempotency-Key runs in one
 * transaction that commits its answer with it, and a repeat of the key answers the recorded answer.
 * A read (GET, HEAD, OPTIONS) can never start a keyed write: it shares one idle RequestWrite
 * instead of allocating its own. Served through the kit's handler (`createServiceKit`), which
 * rolls back a keyed write left open once the answer is made.
 */
export function exactlyOnce(db: Kysely<any>) {
  const reads = new RequestWrite(db);
  return new Elysia({ name: 'crm-exactly-once' })
    .use(requestContext)
    .derive({ as: 'global' }, ({ request }) => {
      if (!IDEMPOTENT_METHODS.has(request.method)) return { write: reads };
      const write = new RequestWrite(db);
      // A keyed write the answer left open (an error, an early answer) is rolled back once the
      // kit has the answer (it runs the scope's afterResponse).
      const scope = scopeOf(request);
      if (scope) scope.afterResponse = () => void write.abandon();
      return { write };
    })
    .onBeforeHandle({ as: 'global' }, async ({ request, tenantId, body, write }) => {
      const key = idempotencyKeyOf(request);
      if (key === undefined || !tenantId) return;
      const fingerprint = await requestFingerprint(request.method, pathAndQuery(request.url), fingerprintBody(body));
      const recorded = await write.begin(tenantId, key, fingerprint);
      if (recorded) return replayAnswer(recorded);
    })
    .onAfterHandle({ as: 'global' }, async ({ responseValue, set, write }) => {
      if (!write.open) return;
      if (responseValue instanceof Response) {
        const headers = Object.fromEntries(responseValue.headers);
        await write.finish(responseValue.status, await responseValue.clone().text(), headers);
        return;
      }
      const status = typeof set.status === 'number' ? set.status : 200;
      const headers = { 'content-type': 'application/json', ...(set.headers as Record<string, string | undefined>) };
      await write.finish(status, JSON.stringify(responseValue ?? null), headers);
    });
}
