import type { ClientCore } from './client.ts';
import type { UploadOptions } from './files.ts';
import type { ApiResponse, CallOptions, WriteOptions } from './request.ts';
import type { JsonBody, ListItem, ListPath, PathParams, PathsWith, QueryParams, SuccessBody } from './types.ts';

type ItemPath = PathsWith<'get'> & PathsWith<'put'> & PathsWith<'delete'>;
/**
 * The one path parameter of a resource path (`identifier`, `id`, `reference`). A string parameter
 * also takes a number: a contact's `identifier` is its id, name, e-mail or CIF.
 */
type KeyOf<I extends PathsWith<'get'>> = PathParams<I, 'get'>[keyof PathParams<I, 'get'>] extends infer K
  ? K extends string
    ? string | number
    : K
  : never;
type ListOptions = Omit<CallOptions, 'headers'>;

/**
 * The thin helpers of one resource with a list (`L`) and an item (`I`) path: each is one call of
 * `request`/`iterate` with the path filled in, typed from the document.
 */
function resource<L extends ListPath, I extends ItemPath>(core: ClientCore, list: L, item: I, key: keyof PathParams<I, 'get'> & string) {
  // The helpers below are typed by their signatures; the generic request is called untyped inside.
  const request = core.request as (method: string, path: string, options?: object) => Promise<any>;
  const params = (value: KeyOf<I>) => ({ [key]: value });
  return {
    get: (id: KeyOf<I>, options?: CallOptions): Promise<ApiResponse<SuccessBody<I, 'get'>>> =>
      request('get', item, { ...options, params: params(id) }),
    /** The resource when its ETag is no longer `etag`, or null when the copy you hold is current (304). */
    getIfChanged: (id: KeyOf<I>, etag: string, options?: CallOptions): Promise<ApiResponse<SuccessBody<I, 'get'>> | null> =>
      (core.getIfChanged as any)(item, etag, { ...options, params: params(id) }),
    /** PUT (partial update, contract §4); with `ifMatch` only when the resource still has that ETag. */
    update: (id: KeyOf<I>, body: JsonBody<I, 'put'>, options?: WriteOptions): Promise<ApiResponse<SuccessBody<I, 'put'>>> =>
      request('put', item, { ...options, params: params(id), body }),
    delete: (id: KeyOf<I>, options?: WriteOptions): Promise<ApiResponse<SuccessBody<I, 'delete'>>> =>
      request('delete', item, { ...options, params: params(id) }),
    /** One page (page mode, or cursor mode with `query.cursor`). */
    list: (query?: QueryParams<L, 'get'>, options?: CallOptions): Promise<ApiResponse<SuccessBody<L, 'get'>>> =>
      request('get', list, { ...options, query }),
    /** Every item, page after page (see `iterate`). */
    iterate: (query?: QueryParams<L, 'get'>, options?: ListOptions): AsyncGenerator<ListItem<L>> =>
      (core.iterate as any)(list, { ...options, query }),
  };
}

/** A resource that is created by POST on its list path. */
function creatable<L extends ListPath & PathsWith<'post'>, I extends ItemPath>(
  core: ClientCore,
  list: L,
  item: I,
  key: keyof PathParams<I, 'get'> & string,
) {
  return {
    ...resource(core, list, item, key),
    create: (body: JsonBody<L, 'post'>, options?: WriteOptions): Promise<ApiResponse<SuccessBody<L, 'post'>>> =>
      (core.request as any)('post', list, { ...options, body }),
  };
}

/** Read-only lists (`list`, `iterate`). */
function listable<L extends ListPath>(core: ClientCore, list: L) {
  return {
    list: (query?: QueryParams<L, 'get'>, options?: CallOptions): Promise<ApiResponse<SuccessBody<L, 'get'>>> =>
      (core.request as any)('get', list, { ...options, query }),
    iterate: (query?: QueryParams<L, 'get'>, options?: ListOptions): AsyncGenerator<ListItem<L>> =>
      (core.iterate as any)(list, { ...options, query }),
  };
}

type UploadFileArg = Parameters<ClientCore['upload']>[1];
type ContactUpload = Omit<UploadOptions<'/v1/contacts/{identifier}/documents'>, 'params'>;
type OpportunityUpload = Omit<UploadOptions<'/v1/opportunities/{id}/documents'>, 'params'>;

/** The helpers per resource, built on the core calls. */
export function resources(core: ClientCore) {
  const documents = listable(core, '/v1/documents');
  return {
    contacts: creatable(core, '/v1/contacts', '/v1/contacts/{identifier}', 'identifier'),
    opportunities: creatable(core, '/v1/opportunities', '/v1/opportunities/{id}', 'id'),
    orders: creatable(core, '/v1/orders', '/v1/orders/{reference}', 'reference'),
    products: creatable(core, '/v1/products', '/v1/products/{reference}', 'reference'),
    productCategories: creatable(core, '/v1/product-categories', '/v1/product-categories/{id}', 'id'),
    webhooks: creatable(core, '/v1/webhooks', '/v1/webhooks/{id}', 'id'),
    documents: {
      ...documents,
      get: (id: number, options?: CallOptions) => core.request('get', '/v1/documents/{id}', { ...options, params: { id } }),
      delete: (id: number, options?: WriteOptions) => core.request('delete', '/v1/documents/{id}', { ...options, params: { id } }),
      /** Uploads a file linked to a contact. */
      uploadToContact: (identifier: string, file: UploadFileArg, options: ContactUpload = {}) =>
        core.upload('/v1/contacts/{identifier}/documents', file, { ...options, params: { identifier } }),
      /** Uploads a file attached to an opportunity. */
      uploadToOpportunity: (id: number, file: UploadFileArg, options: OpportunityUpload = {}) =>
        core.upload('/v1/opportunities/{id}/documents', file, { ...options, params: { id } }),
      download: core.download,
    },
    events: {
      ...listable(core, '/v1/events'),
      get: (id: string, options?: CallOptions) => core.request('get', '/v1/events/{id}', { ...options, params: { id } }),
    },
    users: listable(core, '/v1/users'),
    auditLogs: listable(core, '/v1/audit-logs'),
  };
}
