/**
 * Types derived from the generated `paths` (schema.d.ts): which paths take which method, what
 * their parameters and bodies are, what a success answers, and named aliases for the resources.
 * Nothing here is written twice: every shape comes from the OpenAPI document.
 */
import type { components, paths, webhooks } from './schema.d.ts';

export type { components, paths, webhooks };

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
export type Pagination = components['schemas']['ListPagination'];

export type ErrorEnvelope = components['schemas']['Error'];
/** Every error `type` the API documents (contract §3). */
export type ErrorType = ErrorEnvelope['error']['type'];
export type ErrorDetail = NonNullable<ErrorEnvelope['error']['details']>[number];

/** The document's named schemas (`components.schemas`): every resource, request body and answer. */
type Schemas = components['schemas'];

export type Contact = Schemas['Contact'];
export type ContactInput = Schemas['ContactCreate'];
export type ContactUpdate = Schemas['ContactUpdate'];
export type Opportunity = Schemas['Opportunity'];
export type OpportunityInput = Schemas['OpportunityCreate'];
export type OpportunityUpdate = Schemas['OpportunityUpdate'];
export type Order = Schemas['Order'];
export type OrderInput = Schemas['OrderCreate'];
export type OrderUpdate = Schemas['OrderUpdate'];
export type Product = Schemas['Product'];
export type ProductInput = Schemas['ProductCreate'];
export type ProductUpdate = Schemas['ProductUpdate'];
/** A product category with its subtree in `children`, as the category routes answer it. */
export type ProductCategory = Schemas['ProductCategoryTree'];
export type ProductCategoryInput = Schemas['ProductCategoryCreate'];
export type ProductCategoryUpdate = Schemas['ProductCategoryUpdate'];
export type Document = Schemas['Document'];
export type Webhook = Schemas['Webhook'];
export type WebhookInput = Schemas['WebhookCreate'];
export type WebhookUpdate = Schemas['WebhookUpdate'];
export type Delivery = Schemas['Delivery'];
export type User = Schemas['AccountUser'];
export type AuditLogRecord = Schemas['AuditLog'];

/**
 * One event as webhooks deliver it (contract §16): a union over the event types of the document's
 * `webhooks` section, so checking `type` narrows `data` (`contact.created` → a `Contact`).
 */
export type WebhookEvent = {
  [T in keyof webhooks]: NonNullable<webhooks[T]['post']>['requestBody'] extends { content: { 'application/json': infer B } } ? B : never;
}[keyof webhooks];
/** One event as `GET /v1/events/{id}` lists it: the same `id`, `type`, `timestamp` and `data` as its deliveries (contract §25). */
export type CrmEvent = Schemas['FeedEvent'];
