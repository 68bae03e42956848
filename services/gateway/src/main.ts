import { readFileSync } from 'node:fs';
import { loadOrExit, runService } from '@crm/boot';
import { serve } from '@crm/runtime';
import { createApp } from './app.ts';
import { startAuditPurge } from './audit/purge.ts';
import { loadGatewayConfig } from './config.ts';
import type { GatewayDatabase } from './db/database.ts';
import { migrations } from './db/migrations/index.ts';

const config = loadOrExit('gateway', () => loadGatewayConfig());
const tls =
  config.TLS_CERT_FILE && config.TLS_KEY_FILE
    ? { cert: readFileSync(config.TLS_CERT_FILE, 'utf8'), key: readFileSync(config.TLS_KEY_FILE, 'utf8') }
    : undefined;

await runService<GatewayDatabase>({
  name: 'gateway',
  schema: 'gateway',
  port: config.GATEWAY_PORT,
  config,
  migrations,
  tls,
  clientAddresses: true,
  async start({ db, nc, logger, readiness }) {
    const { fetch, opsFetch, background } = createApp({ config, db, nc, logger, readiness });
    // Metrics and probes on their own port, never TLS and never behind the public ingress (contract §20).
    const ops = serve(opsFetch, { port: config.GATEWAY_OPS_PORT, hostname: config.HOST });
    logger.info('operations port listening', { port: ops.port, host: config.HOST });
    // Audit retention: records older than AUDIT_RETENTION_DAYS deleted in batches, on every replica.
    const auditPurge = startAuditPurge({
      db,
      logger,
      retentionDays: config.AUDIT_RETENTION_DAYS,
      intervalMs: config.AUDIT_PURGE_INTERVAL_MS,
      batchSize: config.AUDIT_PURGE_BATCH,
    });
    // Stopped after the public server has drained, so probes answer while requests finish.
    return { fetch, background: [auditPurge, ...background, { stop: () => ops.stop() }] };
  },
});
