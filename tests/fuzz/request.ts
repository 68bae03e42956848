// Builds the exact request of a generated case (path, query and body bytes, with references
// resolved against the pool), sends it, and writes it down so anyone can replay it.
import type { FuzzCase } from './cases.ts';
import type { ParamValue } from './params.ts';
import { PoolRef, type ResourcePool, resolveRefs } from './pool.ts';
import { jsonBytes, multipartBytes } from './wire.ts';

export interface WireRequest {
  method: string;
  /** Path and query exactly as sent (`/v1/contacts/12?per_page=%00`). */
  target: string;
  headers: Record<string, string>;
  body?: Uint8Array;
}

export interface WireResponse {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

const encoder = new TextEncoder();

function paramText(value: ParamValue, pool: ResourcePool): string {
  if (value instanceof PoolRef) return encodeURIComponent(String(pool.resolve(value)));
  if (typeof value === 'string') return encodeURIComponent(value);
  return value.raw;
}

/**
 * The request of a case, and whether every path reference names a resource that exists (only
 * then does a stated answer of the contract apply: a missing resource may answer 404 first).
 */
export function buildRequest(c: FuzzCase, pool: ResourcePool): { request: WireRequest; realPath: boolean } {
  let target = c.op.path;
  let realPath = true;
  for (const param of c.op.pathParams) {
    const value = c.path[param.name] ?? '';
    // A hostile value stands for itself; a reference is real when it names a known resource by
    // a key that identifies one (a contact's name or e-mail may be ambiguous or look like an id).
    if (value instanceof PoolRef && (!pool.has(value) || !['id', 'reference'].includes(value.field))) realPath = false;
    target = target.replace(`{${param.name}}`, paramText(value, pool));
  }
  if (c.query.length > 0) target += `?${c.query.map((q) => `${paramText(q.name, pool)}=${paramText(q.value, pool)}`).join('&')}`;
  const headers: Record<string, string> = {};
  let body: Uint8Array | undefined;
  if (c.body?.kind === 'json') body = jsonBytes(resolveRefs(c.body.value, pool));
  if (c.body?.kind === 'bytes') body = typeof c.body.bytes === 'string' ? encoder.encode(c.body.bytes) : c.body.bytes;
  if (c.body?.kind === 'multipart') {
    const parts = c.body.parts.map((p) => ({ ...p, data: p.data instanceof PoolRef ? String(pool.resolve(p.data)) : p.data }));
    body = multipartBytes(parts, c.body.boundary, { closed: c.body.closed });
  }
  if (c.body && c.body.contentType !== null) headers['content-type'] = c.body.contentType;
  return { request: { method: c.op.method, target, headers, body }, realPath };
}

/** Sends a request with the tenant's key; `{ error }` when no answer came (refused, reset, timeout). */
export async function sendRequest(
  baseUrl: string,
  apiKey: string,
  request: WireRequest,
  timeoutMs = 20_000,
): Promise<WireResponse | { error: string }> {
  try {
    const response = await fetch(baseUrl + request.target, {
      method: request.method,
      headers: { ...request.headers, 'x-api-key': apiKey },
      body: request.body as BodyInit | undefined,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers, text, json };
  } catch (error) {
    return { error: `${(error as Error).name}: ${(error as Error).message}` };
  }
}

const shellQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
const MAX_SHOWN_BODY = 4096;

/** The request as data for the JSON report (body in base64, the head only when it is huge). */
export function replayable(request: WireRequest) {
  const body = request.body;
  const big = body !== undefined && body.length > 256 * 1024;
  return {
    method: request.method,
    target: request.target,
    headers: request.headers,
    body_bytes: body?.length ?? 0,
    body_base64: body && !big ? Buffer.from(body).toString('base64') : undefined,
    body_base64_head: body && big ? Buffer.from(body.subarray(0, 1024)).toString('base64') : undefined,
    curl: curlCommand(request),
  };
}

/** A shell line that replays the request against `$CRM_URL` with `$CRM_API_KEY`. */
export function curlCommand(request: WireRequest): string {
  const headers = Object.entries(request.headers).map(([k, v]) => `-H ${shellQuote(`${k}: ${v}`)}`);
  const curl = [
    'curl -sS --path-as-is',
    `-X ${request.method}`,
    `"$CRM_URL"${shellQuote(request.target)}`,
    '-H "x-api-key: $CRM_API_KEY"',
    ...headers,
  ];
  if (!request.body) return curl.join(' ');
  if (request.body.length > MAX_SHOWN_BODY)
    return `${curl.join(' ')} --data-binary @body.bin  # body: ${request.body.length} bytes, in the JSON report`;
  return `printf %s ${Buffer.from(request.body).toString('base64')} | base64 -d | ${curl.join(' ')} --data-binary @-`;
}
