import { commonServiceEnv, loadConfig, Port, Type } from '@crm/config';

export const CatalogEnv = Type.Object({ ...commonServiceEnv, CATALOG_PORT: Port(8082) });

/** Catalog configuration, parsed once from the environment. */
export const loadCatalogConfig = (env: Record<string, string | undefined> = process.env) => loadConfig(CatalogEnv, env);
