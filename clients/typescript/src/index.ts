/**
 * @crm/client — a typed client of the CRM API (types generated from its OpenAPI document by
 * `npm run sdk:generate`). Runs on Bun, Deno and Node 20+: it uses only fetch, Web Crypto and
 * other web-standard globals.
 */
export { type ClientOptions, type CrmClient, createClient, type IterateOptions } from './client.ts';
export { CrmApiError, type CrmApiErrorInit, CrmNetworkError, PreconditionFailedError, WebhookVerificationError } from './errors.ts';
export type { DownloadedFile, UploadFields, UploadOptions, UploadPath } from './files.ts';
export type { ApiResponse, CallOptions, RequestOptions, WriteOptions } from './request.ts';
export { isRetryableStatus, type RetryOptions } from './retry.ts';
export type { RetryEvent } from './transport.ts';
export type * from './types.ts';
export { type VerifyOptions, verifyWebhook, type WebhookHeaders } from './webhooks.ts';
