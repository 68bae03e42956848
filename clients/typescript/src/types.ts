/**
 * Types derived from the generated `paths` (schema.d.ts): which paths take which method, what
 * their parameters and bodies are, what a success answers, and named aliases for the resources.
 * Nothing here is written twice: every shape comes from the OpenAPI document.
 */
import type { components, paths } from './schema.d.ts';

export type { components, paths };

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** Paths of the API that answer `M`. */
export type PathsWith<M extends Method> = {
  [P in keyof paths]: paths[P][M] extends { responses: unknown } ? P : never;
}[keyof paths];

type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;
type Parameters<P extends keyof paths, M extends Method> = Operation<P, M> extends { parameters: infer X } ? X : never;

/** Path parameters of an operation (`{ identifier: string }`, `{ id: number }`…), or `never`. */
export type PathParams<P extends keyof paths, M extends Method> = Parameters<P, M> extends { path: infer X } ? X : never;

/** Query parameters of an operation, or `never`. */
export type QueryParams<P extends keyof paths, M extends Method> = NonNullable<Parameters<P, M> extends { query?: infer X } ? X : never>;

/** The JSON body an operation takes, or `never`. */
export type JsonBody<P extends keyof paths, M extends Method> =
  Operation<P, M> extends {
    requestBody?: { content: { 'application/json': infer B } };
  }
    ? B
    : never;

type SuccessStatus = 200 | 201 | 202;

/** The JSON a successful answer of an operation carries. */
export type SuccessBody<P extends keyof paths, M extends Method> = {
  [S in keyof Operation<P, M>['responses']]: S extends SuccessStatus
    ? Operation<P, M>['responses'][S] extends { content: { 'application/json': infer B } }
      ? B
      : never
    : never;
}[keyof Operation<P, M>['responses']];

/** The `data` of a successful answer (the resource, or the list of them). */
export type Data<P extends keyof paths, M extends Method> = SuccessBody<P, M> extends { data: infer D } ? D : never;

/** Paths whose GET answers a list page (`{ data: [...], pagination }`, contract §22). */
export type ListPath = {
  [P in PathsWith<'get'>]: SuccessBody<P, 'get'> extends { data: unknown[]; pagination: unknown } ? P : never;
}[PathsWith<'get'>];

/** One item of a list. */
export type ListItem<P extends ListPath> = Data<P, 'get'> extends (infer I)[] ? I : never;

/** The `pagination` object of every list (page mode counts; cursor mode leaves counts null). */
export type Pagination = SuccessBody<'/v1/contacts', 'get'>['pagination'];

export type ErrorEnvelope = components['schemas']['Error'];
/** Every error `type` the API documents (contract §3). */
export type ErrorType = ErrorEnvelope['error']['type'];
export type ErrorDetail = NonNullable<ErrorEnvelope['error']['details']>[number];

export type Contact = Data<'/v1/contacts/{identifier}', 'get'>;
export type ContactInput = JsonBody<'/v1/contacts', 'post'>;
export type ContactUpdate = JsonBody<'/v1/contacts/{identifier}', 'put'>;
export type Opportunity = Data<'/v1/opportunities/{id}', 'get'>;
export type OpportunityInput = JsonBody<'/v1/opportunities', 'post'>;
export type OpportunityUpdate = JsonBody<'/v1/opportunities/{id}', 'put'>;
export type Order = Data<'/v1/orders/{reference}', 'get'>;
export type OrderInput = JsonBody<'/v1/orders', 'post'>;
export type OrderUpdate = JsonBody<'/v1/orders/{reference}', 'put'>;
export type Product = Data<'/v1/products/{reference}', 'get'>;
export type ProductInput = JsonBody<'/v1/products', 'post'>;
export type ProductUpdate = JsonBody<'/v1/products/{reference}', 'put'>;
export type ProductCategory = Data<'/v1/product-categories/{id}', 'get'>;
export type ProductCategoryInput = JsonBody<'/v1/product-categories', 'post'>;
export type ProductCategoryUpdate = JsonBody<'/v1/product-categories/{id}', 'put'>;
export type Document = Data<'/v1/documents/{id}', 'get'>;
export type Webhook = Data<'/v1/webhooks/{id}', 'get'>;
export type WebhookInput = JsonBody<'/v1/webhooks', 'post'>;
export type WebhookUpdate = JsonBody<'/v1/webhooks/{id}', 'put'>;
export type Delivery = ListItem<'/v1/webhooks/{id}/deliveries'>;
export type User = ListItem<'/v1/users'>;
export type AuditLogRecord = ListItem<'/v1/audit-logs'>;
/** One event, as `GET /v1/events/{id}` lists it and as webhooks deliver it (contract §16, §25). */
export type CrmEvent = Data<'/v1/events/{id}', 'get'>;
