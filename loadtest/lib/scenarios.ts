import { type K6Run, runK6 } from './k6.ts';
import { type LoadTenant, provisionTenant, raisedLimits, type Target } from './target.ts';

/** The k6 scenarios of `npm run loadtest`, in the order `all` runs them. */
export const scenarioNames = ['smoke', 'crud-mix', 'rate-limit', 'spike', 'soak'] as const;
export type ScenarioName = (typeof scenarioNames)[number];

/** How many tenants each scenario gets: `raised` with high limits, `limited` on the defaults. */
const tenantPlan: Record<ScenarioName, { raised: number; limited: number }> = {
  smoke: { raised: 1, limited: 0 },
  'crud-mix': { raised: 3, limited: 0 },
  'rate-limit': { raised: 1, limited: 3 },
  spike: { raised: 2, limited: 0 },
  soak: { raised: 2, limited: 0 },
};

/** Provisions the scenario's tenants through the admin API (raised ones first). */
export async function provisionFor(target: Target, scenario: ScenarioName): Promise<LoadTenant[]> {
  const plan = tenantPlan[scenario];
  const label = `${scenario} ${new Date().toISOString()}`;
  const raised = await Promise.all(Array.from({ length: plan.raised }, (_, i) => provisionTenant(target, `${label} #${i}`, raisedLimits)));
  const limited = await Promise.all(Array.from({ length: plan.limited }, (_, i) => provisionTenant(target, `${label} limited #${i}`)));
  return [...raised, ...limited];
}

/** Runs one scenario against the target with fresh tenants; `env` adds k6 variables. */
export async function runScenario(
  target: Target,
  scenario: ScenarioName,
  options: { env?: Record<string, string>; name?: string; tenants?: LoadTenant[] } = {},
): Promise<K6Run & { tenants: LoadTenant[] }> {
  const tenants = options.tenants ?? (await provisionFor(target, scenario));
  const run = await runK6({
    script: scenario,
    name: options.name ?? scenario,
    env: { GATEWAY_URL: target.gatewayUrl, TENANTS: JSON.stringify(tenants), ...options.env },
  });
  return { ...run, tenants };
}
