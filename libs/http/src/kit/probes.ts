// Stage: /livez, /readyz (the process's own dependencies, each with a 2 s budget) and /metrics.
import { Elysia } from 'elysia';
import type { HttpMetrics } from '../metrics.ts';

export interface ReadinessCheck {
  name: string;
  check: () => Promise<unknown>;
}

/** Paths every process answers without credentials, for orchestrators and scrapers. */
export const PROBE_PATHS = ['/livez', '/readyz', '/metrics'] as const;

async function runChecks(checks: ReadinessCheck[]) {
  const results = await Promise.all(
    checks.map(async ({ name, check }) => {
      try {
        await Promise.race([check(), new Promise((_, reject) => setTimeout(() => reject(new Error('timed out after 2s')), 2000))]);
        return [name, 'ok'] as const;
      } catch (error) {
        return [name, `error: ${error instanceof Error ? error.message : String(error)}`] as const;
      }
    }),
  );
  const ok = results.every(([, r]) => r === 'ok');
  return { ok, body: { status: ok ? 'ok' : 'unavailable', checks: Object.fromEntries(results) } };
}

/** The probes plugin. */
export function probes(service: string, readiness: ReadinessCheck[], metrics: HttpMetrics) {
  return new Elysia({ name: `crm-probes-${service}` })
    .get('/livez', () => ({ status: 'ok' }))
    .get('/readyz', async ({ set }) => {
      const { ok, body } = await runChecks(readiness);
      set.status = ok ? 200 : 503;
      return body;
    })
    .get('/metrics', () => new Response(metrics.render(), { headers: { 'content-type': 'text/plain; version=0.0.4' } }));
}
