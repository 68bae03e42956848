import { commonServiceEnv, loadConfig, Port, Type } from '@crm/config';

export const SalesEnv = Type.Object({
  ...commonServiceEnv,
  SALES_PORT: Port(8081),
  CATALOG_URL: Type.String({ default: 'http://127.0.0.1:8082' }),
});

export type SalesConfig = ReturnType<typeof loadSalesConfig>;

/** Sales configuration, parsed once from the environment. */
export const loadSalesConfig = (env: Record<string, string | undefined> = process.env) => loadConfig(SalesEnv, env);
