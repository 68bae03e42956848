import type { Delivered } from './transport.ts';
import type { JsonBody, Method, PathParams, paths, QueryParams } from './types.ts';

/** A successful answer: the JSON body with what its headers said. */
export interface ApiResponse<B> {
  status: number;
  /** The whole JSON answer (`{ data }`, `{ data, pagination }`, `{ deleted: true }`…). */
  body: B;
  /** `body.data` when the answer has one. */
  data: B extends { data: infer D } ? D : undefined;
  /** The resource's strong ETag (single-resource answers, contract §24): send it back as `ifMatch`. */
  etag: string | null;
  /** `X-Request-ID` of the answer: quote it when reporting a problem. */
  requestId: string | null;
  /** True when the gateway replayed the stored answer of an earlier request with the same Idempotency-Key. */
  replayed: boolean;
  /** The Idempotency-Key the write was sent with (null for reads). */
  idempotencyKey: string | null;
  /** Attempts it took (1 = no retry). */
  attempts: number;
  /** The `Link` header by relation (`next`, `prev`, `first`, `last`: paths relative to the host, contract §22). */
  links: Record<string, string>;
  headers: Headers;
}

/** Options every call takes. */
export interface CallOptions {
  /** Extra request headers. */
  headers?: Record<string, string>;
  /** Aborts the request and any wait between retries. */
  signal?: AbortSignal;
}

/** Options of writes (POST, PUT, PATCH, DELETE). */
export interface WriteOptions extends CallOptions {
  /** Your own Idempotency-Key (1–255 printable ASCII); a random UUID otherwise. Retries reuse it. */
  idempotencyKey?: string;
  /** Only write when the resource's current ETag is this one (or `*`); else `PreconditionFailedError`. */
  ifMatch?: string;
}

type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;

type ParamsPart<P extends keyof paths, M extends Method> = [PathParams<P, M>] extends [never]
  ? { params?: undefined }
  : { params: PathParams<P, M> };
type QueryPart<P extends keyof paths, M extends Method> = [QueryParams<P, M>] extends [never]
  ? { query?: undefined }
  : { query?: QueryParams<P, M> };
type BodyPart<P extends keyof paths, M extends Method> = [JsonBody<P, M>] extends [never]
  ? { body?: undefined }
  : Operation<P, M> extends { requestBody: unknown }
    ? { body: JsonBody<P, M> }
    : { body?: JsonBody<P, M> };

/** What `request(method, path, options)` takes for this operation: its path parameters, query and body, typed. */
export type RequestOptions<P extends keyof paths, M extends Method> = ParamsPart<P, M> &
  QueryPart<P, M> &
  BodyPart<P, M> &
  (M extends 'get' ? CallOptions : WriteOptions);

/** The options argument, optional when nothing in it is required. */
export type OptionsArg<O> = {} extends O ? [options?: O] : [options: O];

/** Reads a delivered answer's JSON into an ApiResponse. */
export async function readAnswer<B>(delivered: Delivered): Promise<ApiResponse<B>> {
  const { response } = delivered;
  const text = response.status === 304 ? '' : await response.text();
  const json = text && (response.headers.get('content-type') ?? '').includes('json');
  const body = (json ? JSON.parse(text) : text || undefined) as B;
  return {
    status: response.status,
    body,
    data: (body as { data?: unknown } | undefined)?.data as ApiResponse<B>['data'],
    etag: response.headers.get('etag'),
    requestId: response.headers.get('x-request-id'),
    replayed: response.headers.get('idempotent-replayed') === 'true',
    idempotencyKey: delivered.idempotencyKey,
    attempts: delivered.attempts,
    links: linksOf(response.headers.get('link')),
    headers: response.headers,
  };
}

/** An RFC 8288 `Link` header as `{ rel: target }` (`<…/v1/contacts?cursor=x>; rel="next"` → `{ next: '…' }`). */
export function linksOf(header: string | null): Record<string, string> {
  const links: Record<string, string> = {};
  for (const match of (header ?? '').matchAll(/<([^>]*)>((?:\s*;\s*[^;,]+)*)/g)) {
    const rel = /;\s*rel\s*=\s*"?([^";,]+)"?/i.exec(match[2] ?? '')?.[1];
    for (const name of rel?.trim().split(/\s+/) ?? []) links[name] ??= match[1] as string;
  }
  return links;
}
