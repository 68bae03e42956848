import http from 'node:http';
import https from 'node:https';
import { guardedLookup, literalTargetRefusal, type TargetPolicy } from '../ssrf/target-guard.ts';
import { parseWebhookUrl } from '../ssrf/webhook-url.ts';

const EXCERPT_BYTES = 2048;

export interface SendRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  targetPolicy: TargetPolicy;
}

/** What one POST produced: a status code (any, redirects included), or a network error. */
export interface SendResult {
  statusCode: number | null;
  retryAfter: string | null;
  excerpt: string | null;
  error: string | null;
  durationMs: number;
}

/**
 * POSTs a webhook with node:http(s): no redirects followed, every resolved address re-checked
 * at connect time, the whole exchange bounded by `timeoutMs`, and at most 2 KB of the answer kept.
 */
export function sendWebhook(request: SendRequest): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  // The registration rules again: a row stored before them (or edited since) gets no request.
  const { url, problem } = parseWebhookUrl(request.url);
  if (!url) return Promise.resolve(failure(`refused: url ${problem}`, elapsed()));
  // node:http skips `lookup` for IP literals, so those are checked here.
  const literalRefusal = literalTargetRefusal(url, request.targetPolicy.allowedNets);
  if (literalRefusal) return Promise.resolve(failure(`refused: ${literalRefusal}`, elapsed()));

  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request(
      url,
      {
        method: 'POST',
        headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
        lookup: guardedLookup(request.targetPolicy) as any,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () => {
          const retryAfter = res.headers['retry-after'];
          finish({
            statusCode: res.statusCode ?? null,
            retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
            excerpt: size > 0 ? Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8') : '',
            error: null,
            durationMs: elapsed(),
          });
          res.destroy();
        };
        res.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.length;
          if (size >= EXCERPT_BYTES) done();
        });
        res.on('end', done);
        res.on('error', done);
      },
    );
    const timer = setTimeout(() => {
      finish(failure(`timeout after ${request.timeoutMs} ms`, elapsed()));
      req.destroy();
    }, request.timeoutMs);
    req.on('error', (error: Error & { code?: string }) => {
      const reason =
        error.name === 'ForbiddenTargetError'
          ? `refused: ${error.message}`
          : error.code
            ? `${error.code}: ${error.message}`
            : error.message;
      finish(failure(reason, elapsed()));
    });
    req.end(request.body);
  });
}

function failure(error: string, durationMs: number): SendResult {
  return { statusCode: null, retryAfter: null, excerpt: null, error, durationMs };
}
