/** The services behind the gateway, with their default local ports and env variable names. */
export const services = {
  sales: { port: 8081, urlEnv: 'SALES_URL', portEnv: 'SALES_PORT' },
  catalog: { port: 8082, urlEnv: 'CATALOG_URL', portEnv: 'CATALOG_PORT' },
  documents: { port: 8083, urlEnv: 'DOCUMENTS_URL', portEnv: 'DOCUMENTS_PORT' },
  webhooks: { port: 8084, urlEnv: 'WEBHOOKS_URL', portEnv: 'WEBHOOKS_PORT' },
} as const;

export type ServiceName = keyof typeof services;
export const serviceNames = Object.keys(services) as ServiceName[];
export const GATEWAY_DEFAULT_PORT = 8080;
/** The gateway's operations port: /metrics, /livez, /readyz, off the public network (contract §20). */
export const GATEWAY_OPS_DEFAULT_PORT = 9090;
