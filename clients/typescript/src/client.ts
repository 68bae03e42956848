import { type DownloadedFile, downloadOf, type UploadOptions, type UploadPath, uploadForm } from './files.ts';
import { type ApiResponse, type CallOptions, type OptionsArg, type RequestOptions, readAnswer } from './request.ts';
import { resources } from './resources.ts';
import { type RetryOptions, retryPolicy } from './retry.ts';
import { expandPath, type FetchLike, queryString, type RetryEvent, type TransportConfig, transmit } from './transport.ts';
import type { ListItem, ListPath, Method, PathParams, PathsWith, QueryParams, SuccessBody } from './types.ts';

export interface ClientOptions {
  /** The gateway, e.g. `http://127.0.0.1:8080` (a trailing `/v1` is accepted too). */
  baseUrl: string;
  /** The account's key, `crm_…`, sent as `x-api-key`. */
  apiKey: string;
  /** A fetch of your own (a proxy agent, a test double); the global fetch otherwise. */
  fetch?: FetchLike;
  /** Retry budget: options, a number of retries, or `false` for none (default 4 retries within 60 s). */
  retries?: RetryOptions | number | false;
  /** Time for one attempt to get its answer, in ms (default 30 000); an attempt that takes longer is retried. */
  timeoutMs?: number;
  /** Called before each retry (log it, count it). */
  onRetry?: (event: RetryEvent) => void;
}

/** Options of `iterate`: the list's path parameters and query (filters, `sort`, `per_page`). */
export type IterateOptions<P extends ListPath> = ([PathParams<P, 'get'>] extends [never] ? {} : { params: PathParams<P, 'get'> }) & {
  query?: QueryParams<P, 'get'>;
  signal?: AbortSignal;
};

/** The generic calls every resource helper is made of. */
function createCore(options: ClientOptions) {
  const retries = options.retries;
  const config: TransportConfig = {
    baseUrl: options.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, ''),
    apiKey: options.apiKey,
    fetch: options.fetch ?? ((input, init) => fetch(input, init)),
    retry: retryPolicy(typeof retries === 'number' ? { maxRetries: retries } : retries === false ? { maxRetries: 0 } : retries),
    timeoutMs: options.timeoutMs ?? 30_000,
    onRetry: options.onRetry,
  };

  /** Any operation of the API, typed by method and path: `request('put', '/v1/contacts/{identifier}', { params, body, ifMatch })`. */
  async function request<M extends Method, P extends PathsWith<M>>(
    method: M,
    path: P,
    ...[options]: OptionsArg<RequestOptions<P, M>>
  ): Promise<ApiResponse<SuccessBody<P, M>>> {
    const o = (options ?? {}) as RequestOptions<P, M> & { params?: Record<string, unknown>; query?: Record<string, unknown> };
    const headers: Record<string, string> = { ...o.headers };
    if ('ifMatch' in o && o.ifMatch) headers['if-match'] = o.ifMatch;
    let body: string | undefined;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] = 'application/json';
    }
    const delivered = await transmit(config, {
      method,
      path: expandPath(path, o.params) + queryString(o.query),
      body,
      headers,
      idempotencyKey: 'idempotencyKey' in o ? o.idempotencyKey : undefined,
      signal: o.signal,
    });
    return readAnswer(delivered);
  }

  /**
   * A GET that sends `If-None-Match: etag`: the fresh answer when the resource changed, or null when
   * the copy you hold is still current (304).
   */
  async function getIfChanged<P extends PathsWith<'get'>>(
    path: P,
    etag: string,
    ...[options]: OptionsArg<RequestOptions<P, 'get'>>
  ): Promise<ApiResponse<SuccessBody<P, 'get'>> | null> {
    const o = (options ?? {}) as CallOptions;
    const answer = await (request as any)('get', path, { ...o, headers: { ...o.headers, 'if-none-match': etag } });
    return answer.status === 304 ? null : answer;
  }

  /**
   * Every item of a list, however many pages: the first page in page mode, then
   * `cursor = pagination.next_cursor` until `has_more` is false (contract §22), so items inserted
   * or deleted meanwhile never make it skip or repeat one.
   */
  async function* iterate<P extends ListPath>(path: P, ...[options]: OptionsArg<IterateOptions<P>>): AsyncGenerator<ListItem<P>> {
    const o = (options ?? {}) as { params?: Record<string, unknown>; query?: Record<string, unknown>; signal?: AbortSignal };
    const { page: _page, ...query } = o.query ?? {};
    for (let cursor: unknown = query.cursor; ; ) {
      const answer = await (request as any)('get', path, { params: o.params, query: { ...query, cursor }, signal: o.signal });
      const { data, pagination } = answer.body as { data: ListItem<P>[]; pagination: { has_more: boolean; next_cursor: string | null } };
      yield* data;
      if (!pagination.has_more || !pagination.next_cursor) return;
      cursor = pagination.next_cursor;
    }
  }

  /** Uploads a file as multipart/form-data (`file` plus the path's other fields), retried like any write. */
  async function upload<P extends UploadPath>(
    path: P,
    file: Blob | Uint8Array | ArrayBuffer | string,
    options: UploadOptions<P>,
  ): Promise<ApiResponse<SuccessBody<P, 'post'>>> {
    const { params, idempotencyKey, signal, headers } = options as UploadOptions<P> & { params: Record<string, unknown> };
    const delivered = await transmit(config, {
      method: 'POST',
      path: expandPath(path, params),
      body: uploadForm(file, options),
      headers,
      idempotencyKey,
      signal,
    });
    return readAnswer(delivered);
  }

  /** A document's stored bytes (`GET /v1/documents/{id}/content`) with their type and file name. */
  async function download(documentId: number, options: CallOptions = {}): Promise<DownloadedFile> {
    const delivered = await transmit(config, {
      method: 'GET',
      path: expandPath('/v1/documents/{id}/content', { id: documentId }),
      headers: { ...options.headers, accept: '*/*' },
      signal: options.signal,
    });
    return downloadOf(delivered);
  }

  return { request, getIfChanged, iterate, upload, download };
}

export type ClientCore = ReturnType<typeof createCore>;

/**
 * A client of the CRM API: the generic calls plus a helper per resource (`contacts.create`,
 * `orders.iterate`…). Every call throws `CrmApiError` (or a subclass) on an error answer and
 * `CrmNetworkError` when no answer came within the retry budget.
 */
export function createClient(options: ClientOptions) {
  const core = createCore(options);
  return { ...core, ...resources(core) };
}

export type CrmClient = ReturnType<typeof createClient>;
