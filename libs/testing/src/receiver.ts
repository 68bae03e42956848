import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import { pollUntil } from './poll.ts';

/** One POST as the receiver saw it. */
export interface ReceivedWebhook {
  /** The `webhook-id` header (the event id, the same on every retry). */
  id: string;
  /** The request path, so one receiver can serve several endpoints (`/<label>`). */
  path: string;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  body: { id: string; type: string; timestamp: string; data: any };
  receivedAt: number;
  /** Which of the receiver's known secrets produced a matching signature. */
  verifiedWith: string[];
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Wait this long before answering (to provoke timeouts). */
  delayMs?: number;
}

/** How the receiver answers the `index`-th POST. */
export type ReplyFn = (hook: ReceivedWebhook, index: number) => Reply;

/** Verifies a Standard Webhooks request the way a customer would: recompute the HMAC for each known secret. */
export function verifiedSecrets(headers: http.IncomingHttpHeaders, rawBody: string, secrets: string[], toleranceSeconds = 300): string[] {
  const id = String(headers['webhook-id'] ?? '');
  const timestamp = String(headers['webhook-timestamp'] ?? '');
  const signatures = String(headers['webhook-signature'] ?? '')
    .split(' ')
    .map((s) => s.split(',')[1] ?? '');
  if (!id || !/^\d+$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > toleranceSeconds) return [];
  return secrets.filter((secret) => {
    const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
    const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${rawBody}`).digest();
    return signatures.some((s) => {
      const given = Buffer.from(s, 'base64');
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
  });
}

/**
 * The one local webhook receiver of the tests and load tests: records every POST, verifies its signature against the
 * secrets it was told about, and answers with `reply` (200 by default).
 */
export async function startReceiver(options: { reply?: ReplyFn } = {}) {
  const received: ReceivedWebhook[] = [];
  const secrets: string[] = [];
  let reply: ReplyFn = options.reply ?? (() => ({ status: 200, body: 'ok' }));
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let body: ReceivedWebhook['body'];
      try {
        body = JSON.parse(rawBody);
      } catch {
        body = { id: '', type: '', timestamp: '', data: rawBody };
      }
      const hook: ReceivedWebhook = {
        id: String(req.headers['webhook-id'] ?? ''),
        path: req.url ?? '/',
        headers: req.headers,
        rawBody,
        body,
        receivedAt: Date.now(),
        verifiedWith: verifiedSecrets(req.headers, rawBody, secrets),
      };
      received.push(hook);
      const answer = reply(hook, received.length - 1);
      setTimeout(() => {
        res.writeHead(answer.status, answer.headers ?? {});
        res.end(answer.body ?? '');
      }, answer.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    /** Secrets deliveries are verified against (add the one returned at creation). */
    trust(secret: string) {
      secrets.push(secret);
    },
    setReply(next: ReplyFn) {
      reply = next;
    },
    /** Distinct event ids received, and how many deliveries repeated an id already seen. */
    tally(filter: (r: ReceivedWebhook) => boolean = () => true) {
      const mine = received.filter(filter);
      const ids = new Map<string, number>();
      for (const r of mine) ids.set(r.id, (ids.get(r.id) ?? 0) + 1);
      return { distinct: ids.size, duplicates: mine.length - ids.size, total: mine.length };
    },
    /** Received webhooks of one type, or all. */
    ofType(type?: string) {
      return type ? received.filter((r) => r.body.type === type) : received;
    },
    /** Waits until `predicate` holds for the received list; throws with what arrived after `timeoutMs`. */
    waitFor(predicate: (all: ReceivedWebhook[]) => boolean, timeoutMs = 20_000): Promise<ReceivedWebhook[]> {
      return pollUntil('receiver: the webhooks awaited', async () => received, predicate, {
        timeoutMs,
        everyMs: 50,
        show: (all) => `${all.length} received: ${all.map((r) => r.body.type).join(', ')}`,
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
