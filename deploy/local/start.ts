// `npm start`: brings up PostgreSQL, NATS and MinIO where they are not already running, starts
// the five services (each migrates its own schema at boot), provisions a demo tenant and prints
// the gateway URL with a ready-to-use API key. Ctrl-C stops everything this script started.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ensureDatabase } from '@crm/db';
import {
  defaultOpsPort,
  defaultPorts,
  ensureMinio,
  ensureNats,
  ensurePostgres,
  portEnv,
  processNames,
  type ServiceProcess,
  type Started,
  spawnService,
  waitReady,
} from '@crm/stack';
import { localSettings } from './env.ts';

const settings = localSettings();
const log = (m: string) => console.log(`[start] ${m}`);
const owned: Started[] = [];
const running: ServiceProcess[] = [];
let stopping = false;

async function stopAll(code: number) {
  if (stopping) return;
  stopping = true;
  log('stopping…');
  await Promise.all(running.map((p) => p.stop('SIGTERM')));
  for (const infra of owned.reverse()) {
    infra.process?.kill('SIGTERM');
    await new Promise((r) => infra.process?.once('exit', r) ?? r(null));
  }
  log('stopped');
  process.exit(code);
}
process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));

mkdirSync(settings.dataDir, { recursive: true });
await ensurePostgres(settings.databaseUrl, log);
const nats = await ensureNats(settings.natsUrl, settings.dataDir, log);
if (nats) owned.push(nats);
const minio = await ensureMinio(settings.s3, settings.dataDir, log);
if (minio) owned.push(minio);
await ensureDatabase(settings.databaseUrl);

const ports = defaultPorts();
const opsPort = defaultOpsPort();
const adminToken = process.env.ADMIN_TOKEN ?? `adm_${crypto.randomUUID().replace(/-/g, '')}`;
const env: Record<string, string> = {
  ...portEnv(ports),
  DATABASE_URL: settings.databaseUrl,
  NATS_URL: settings.natsUrl,
  S3_ENDPOINT: settings.s3.endpoint,
  S3_ACCESS_KEY: settings.s3.accessKey,
  S3_SECRET_KEY: settings.s3.secretKey,
  S3_REGION: settings.s3.region,
  S3_BUCKET: settings.bucket,
  ADMIN_TOKEN: adminToken,
  INTERNAL_TOKEN: process.env.INTERNAL_TOKEN ?? `int_${crypto.randomUUID().replace(/-/g, '')}`,
};
const logDir = join(settings.dataDir, 'logs');
for (const name of processNames) {
  const proc = spawnService({
    name,
    port: ports[name],
    opsPort,
    env,
    logFile: join(logDir, `${name}.log`),
    echo: process.env.CRM_LOG_STDOUT === '1',
  });
  proc.child.once('exit', (code) => {
    if (!stopping) {
      log(`${name} exited unexpectedly (code ${code}); see ${join(logDir, `${name}.log`)}`);
      void stopAll(1);
    }
  });
  running.push(proc);
}
try {
  await Promise.all(running.map((p) => waitReady(p)));
} catch (error) {
  log(String(error));
  await stopAll(1);
}

const gatewayUrl = `http://127.0.0.1:${ports.gateway}`;
const apiKey = await demoKey(gatewayUrl, adminToken);
console.log(`
  CRM API is ready.

  Gateway     ${gatewayUrl}/v1
  API key     ${apiKey}
  Admin token ${adminToken}
  API docs    ${gatewayUrl}/docs   (OpenAPI: ${gatewayUrl}/openapi/v1.yaml)
  Operations  http://127.0.0.1:${opsPort}/metrics   (also /livez, /readyz; keep this port private)
  Logs        ${logDir}/<service>.log

  Try:  curl -s ${gatewayUrl}/v1/contacts -H 'x-api-key: ${apiKey}'

  Ctrl-C stops everything this command started.
`);

/** The demo tenant's key: reused from .local/state.json while it still works, otherwise a new tenant. */
async function demoKey(url: string, token: string): Promise<string> {
  if (existsSync(settings.stateFile)) {
    const saved = JSON.parse(readFileSync(settings.stateFile, 'utf8')) as { api_key?: string };
    if (saved.api_key) {
      const check = await fetch(`${url}/v1/users`, { headers: { 'x-api-key': saved.api_key } });
      if (check.ok) return saved.api_key;
    }
  }
  const response = await fetch(`${url}/admin/tenants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Demo', users: [{ email: 'demo@example.com', name: 'Demo User' }] }),
  });
  if (response.status !== 201) throw new Error(`could not create the demo tenant: ${response.status} ${await response.text()}`);
  const { data } = (await response.json()) as { data: { tenant_id: string; api_key: string } };
  mkdirSync(dirname(settings.stateFile), { recursive: true });
  writeFileSync(settings.stateFile, JSON.stringify({ tenant_id: data.tenant_id, api_key: data.api_key, gateway_url: url }, null, 2));
  return data.api_key;
}
