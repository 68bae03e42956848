import { AppError, headers as h } from '@crm/http';
import type { RequestBody } from './body.ts';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  'x-api-key',
  h.tenant,
  h.internalToken,
  h.requestId,
]);

export interface ForwardInput {
  request: Request;
  baseUrl: string;
  pathAndQuery: string;
  body: RequestBody;
  tenantId: string;
  requestId: string;
  internalToken: string;
  clientIp?: string;
  timeoutMs: number;
}

/**
 * Sends the request to the owning service with tenant, request id and internal credential,
 * streaming the body both ways. A refused connection is 503 service_unavailable; no answer
 * (headers) within the timeout is 504 upstream_timeout.
 */
export async function forward(input: ForwardInput): Promise<Response> {
  const out = new Headers();
  input.request.headers.forEach((value, key) => {
    if (!HOP_BY_HOP.has(key)) out.set(key, value);
  });
  out.set(h.tenant, input.tenantId);
  out.set(h.requestId, input.requestId);
  out.set(h.internalToken, input.internalToken);
  if (input.clientIp) out.set('x-forwarded-for', input.clientIp);

  let body: BodyInit | null = null;
  if (input.body.kind === 'json') {
    body = input.body.text;
    out.set('content-type', 'application/json');
  } else if (input.body.kind === 'multipart') {
    body = input.body.stream;
    const length = input.request.headers.get('content-length');
    if (length) out.set('content-length', length);
  } else {
    out.delete('content-type');
  }

  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), input.timeoutMs);
  let upstream: Response;
  try {
    upstream = await fetch(input.baseUrl + input.pathAndQuery, {
      method: input.request.method,
      headers: out,
      body,
      redirect: 'manual',
      signal: controller.signal,
      // @ts-expect-error: streaming request bodies need half duplex (Node/Deno/Bun fetch)
      duplex: 'half',
    });
  } catch (error) {
    if (input.body.kind === 'multipart' && input.body.exceeded()) {
      throw new AppError('payload_too_large', 'Uploads must be at most 20971520 bytes (20 MB)');
    }
    if (controller.signal.aborted) throw new AppError('upstream_timeout', 'The upstream service did not answer in time');
    throw new AppError(
      'service_unavailable',
      `The upstream service is unavailable (${error instanceof Error ? error.message : 'connection failed'})`,
    );
  } finally {
    clearTimeout(timer);
  }
  const responseHeaders = new Headers(upstream.headers);
  responseHeaders.delete('connection');
  responseHeaders.delete('keep-alive');
  responseHeaders.delete('transfer-encoding');
  responseHeaders.set(h.requestId, input.requestId);
  return new Response(upstream.body, { status: upstream.status, statusText: upstream.statusText, headers: responseHeaders });
}
