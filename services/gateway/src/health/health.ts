import { type ServiceName, serviceNames } from '@crm/contracts';
import { AppError } from '@crm/http';

export type ServiceUrls = Record<ServiceName, string>;

async function probe(url: string): Promise<string> {
  try {
    const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) });
    await response.body?.cancel();
    return response.ok ? 'up' : `not ready (${response.status})`;
  } catch (error) {
    return `down (${error instanceof Error ? error.name : 'error'})`;
  }
}

/**
 * GET /v1/health: asks every service's /readyz. All up → 200 with each status; otherwise a
 * 503 service_unavailable whose message names the failing services.
 */
export async function healthReport(urls: ServiceUrls) {
  const results = await Promise.all(serviceNames.map(async (name) => [name, await probe(urls[name])] as const));
  const services = Object.fromEntries([['gateway', 'up'], ...results]);
  const failing = results.filter(([, status]) => status !== 'up');
  if (failing.length > 0) {
    throw new AppError(
      'service_unavailable',
      `Unavailable services: ${failing.map(([n]) => n).join(', ')}`,
      failing.map(([field, message]) => ({ field, message })),
    );
  }
  return { data: { status: 'ok', services } };
}
