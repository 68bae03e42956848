import { commonServiceEnv, loadConfig, Port, Type } from '@crm/config';

export const WebhooksEnv = Type.Object({
  ...commonServiceEnv,
  WEBHOOKS_PORT: Port(8084),
  WEBHOOK_ALLOWED_NETS: Type.String({ default: '', description: 'Comma-separated CIDRs allowed as webhook targets despite being private' }),
});

/** Webhooks configuration, parsed once from the environment. */
export const loadWebhooksConfig = (env: Record<string, string | undefined> = process.env) => loadConfig(WebhooksEnv, env);
