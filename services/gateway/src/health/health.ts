import { type ServiceName, serviceNames, services } from '@crm/contracts';
import { AppError } from '@crm/http';
import { Elysia, t } from 'elysia';

export type ServiceUrls = Record<ServiceName, string>;

/** Service base URLs from config (`SALES_URL`, `CATALOG_URL`…). */
export function serviceUrls(config: Record<string, unknown>): ServiceUrls {
  return Object.fromEntries(Object.entries(services).map(([name, s]) => [name, String(config[s.urlEnv])])) as ServiceUrls;
}

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
  const services = Object.fromEntries([['gateway', 'up'], ...results]) as Record<'gateway' | ServiceName, string>;
  const failing = results.filter(([, status]) => status !== 'up');
  if (failing.length > 0) {
    throw new AppError(
      'service_unavailable',
      `Unavailable services: ${failing.map(([n]) => n).join(', ')}`,
      failing.map(([field, message]) => ({ field, message })),
    );
  }
  return { data: { status: 'ok' as const, services } };
}

const ServiceStatus = t.String({ description: '`up`, or why the service is not usable', examples: ['up'] });

/** GET /v1/health as a gateway-owned route (reached only through the /v1 pipeline, so it needs a key). */
export function healthRoutes(urls: ServiceUrls) {
  return new Elysia({ name: 'gateway-health' }).get('/v1/health', () => healthReport(urls), {
    response: {
      200: t.Object(
        {
          data: t.Object({
            status: t.Literal('ok'),
            services: t.Object({
              gateway: ServiceStatus,
              sales: ServiceStatus,
              catalog: ServiceStatus,
              documents: ServiceStatus,
              webhooks: ServiceStatus,
            }),
          }),
        },
        { title: 'HealthResponse' },
      ),
    },
    detail: {
      summary: 'Health of the API',
      tags: ['Health'],
      description: 'Asks every service whether it is ready. Answers 503 service_unavailable naming the failing services when any is down.',
    },
  });
}
