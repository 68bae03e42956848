import type { ServiceName } from '@crm/contracts';

/** Which service owns a public path (contract §1). Documents of contacts and opportunities belong to documents. */
const table: [RegExp, ServiceName][] = [
  [/^\/v1\/(contacts|opportunities)\/[^/]+\/documents(\/|$)/, 'documents'],
  [/^\/v1\/(contacts|opportunities|orders|users)(\/|$)/, 'sales'],
  [/^\/v1\/(products|product-categories)(\/|$)/, 'catalog'],
  [/^\/v1\/(documents|document-categories)(\/|$)/, 'documents'],
  [/^\/v1\/webhooks(\/|$)/, 'webhooks'],
  // The events feed (contract §25) is kept by the webhooks service, which consumes the stream.
  [/^\/v1\/events(\/|$)/, 'webhooks'],
];

/** The service that owns this /v1 path, or undefined for an unknown route. */
export function owningService(path: string): ServiceName | undefined {
  for (const [pattern, service] of table) if (pattern.test(path)) return service;
  return undefined;
}

/**
 * A bounded metrics label (contract §20): `/v1/<resource>` for a path some service owns, else
 * `unmatched`, so unknown paths from unauthenticated clients never create new series. Given the
 * path's owning service when the caller already knows it.
 */
export function routeLabel(path: string, service: ServiceName | undefined = owningService(path)): string {
  if (!service) return 'unmatched';
  const end = path.indexOf('/', 4);
  return end === -1 ? path : path.slice(0, end);
}
