import { join } from 'node:path';
import { DeleteBucketCommand, DeleteObjectsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { type ServiceName, services } from '@crm/contracts';
import { ensureDatabase } from '@crm/db';
import {
  ensureMinio,
  ensureNats,
  ensurePostgres,
  freePort,
  type ProcessName,
  processNames,
  repoRoot,
  type S3Env,
  type ServiceProcess,
  s3Client,
  spawnService,
  waitReady,
} from '@crm/stack';
import { connect } from 'nats';
import pg from 'pg';
import { type ProxySite, startNginx } from './nginx.ts';

/** One process kind running as `replicas` processes behind a round-robin nginx port. */
export interface Pool {
  name: ProcessName;
  balancerUrl: string;
  replicas: ServiceProcess[];
}

/**
 * The whole platform scaled out on loopback: `replicas` processes of the gateway and of every
 * service, each kind behind an nginx round-robin upstream; every URL the processes use to reach
 * each other points at a balancer. Own database, JetStream stream and bucket, removed by stop().
 */
export async function startCluster(options: { replicas?: number; log?: (m: string) => void } = {}) {
  const replicas = options.replicas ?? 2;
  const log = options.log ?? console.log;
  const runId = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const baseDb = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
  const dataDir = join(repoRoot, '.data');
  const s3: S3Env = {
    endpoint: process.env.S3_ENDPOINT ?? 'http://127.0.0.1:9000',
    accessKey: process.env.S3_ACCESS_KEY ?? 'minioadmin',
    secretKey: process.env.S3_SECRET_KEY ?? 'minioadmin',
    region: process.env.S3_REGION ?? 'us-east-1',
  };
  await ensurePostgres(baseDb, log);
  await ensureNats(natsUrl, dataDir, log);
  await ensureMinio(s3, dataDir, log, true);
  const dbUrl = new URL(baseDb);
  dbUrl.pathname = `/crm_scale_${runId}`;
  const databaseUrl = dbUrl.toString();
  await ensureDatabase(databaseUrl);

  const balancerPorts = Object.fromEntries(await Promise.all(processNames.map(async (n) => [n, await freePort()]))) as Record<
    ProcessName,
    number
  >;
  const replicaPorts = Object.fromEntries(
    await Promise.all(processNames.map(async (n) => [n, await Promise.all(Array.from({ length: replicas }, () => freePort()))])),
  ) as Record<ProcessName, number[]>;
  const stream = `CRM_EVENTS_S${runId.toUpperCase()}`;
  const bucket = `crm-scale-${runId}`;
  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    NATS_URL: natsUrl,
    INTERNAL_TOKEN: `internal-${crypto.randomUUID()}`,
    ADMIN_TOKEN: `admin-${crypto.randomUUID()}`,
    EVENTS_STREAM: stream,
    EVENTS_SUBJECT_PREFIX: `crms${runId}.events`,
    S3_ENDPOINT: s3.endpoint,
    S3_ACCESS_KEY: s3.accessKey,
    S3_SECRET_KEY: s3.secretKey,
    S3_REGION: s3.region,
    S3_BUCKET: bucket,
    WEBHOOK_ALLOWED_NETS: '127.0.0.0/8,::1/128',
    LOG_LEVEL: 'warn',
  };
  for (const [name, s] of Object.entries(services)) env[s.urlEnv] = `http://127.0.0.1:${balancerPorts[name as ServiceName]}`;

  const sites: ProxySite[] = processNames.map((n) => ({ port: balancerPorts[n], upstreams: replicaPorts[n].map((p) => `127.0.0.1:${p}`) }));
  const nginx = await startNginx(sites, { workers: 1, log });
  const logDir = join(dataDir, 'scale-logs', runId);
  const pools = {} as Record<ProcessName, Pool>;
  for (const name of processNames) pools[name] = { name, balancerUrl: `http://127.0.0.1:${balancerPorts[name]}`, replicas: [] };

  const spawnReplica = async (name: ProcessName, index: number) => {
    const port = replicaPorts[name][index]!;
    const portVar = name === 'gateway' ? 'GATEWAY_PORT' : services[name].portEnv;
    const proc = spawnService({ name, port, env: { ...env, [portVar]: String(port) }, logFile: join(logDir, `${name}-${index + 1}.log`) });
    await waitReady(proc, 90_000);
    return proc;
  };
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const stopAll = async () => {
    await Promise.all(Object.values(pools).flatMap((p) => p.replicas.map((r) => r.stop('SIGTERM'))));
    await nginx.stop();
    await pool.end();
    await dropResources({ baseDb, databaseUrl, natsUrl, stream, s3, bucket });
  };
  try {
    // The first replica of each kind migrates alone; the others then join.
    for (let index = 0; index < replicas; index++) {
      const started = await Promise.all(processNames.filter((n) => n !== 'gateway').map((n) => spawnReplica(n, index)));
      for (const proc of started) pools[proc.name].replicas.push(proc);
      pools.gateway.replicas.push(await spawnReplica('gateway', index));
    }
  } catch (error) {
    await stopAll();
    throw error;
  }
  return {
    runId,
    env,
    logDir,
    pools,
    gatewayUrl: pools.gateway.balancerUrl,
    adminToken: env.ADMIN_TOKEN!,
    sql: (text: string, params: unknown[] = []) => pool.query(text, params),
    stop: stopAll,
  };
}

export type Cluster = Awaited<ReturnType<typeof startCluster>>;

async function dropResources(r: { baseDb: string; databaseUrl: string; natsUrl: string; stream: string; s3: S3Env; bucket: string }) {
  const client = new pg.Client({ connectionString: r.baseDb });
  await client.connect().catch(() => {});
  await client.query(`drop database if exists "${new URL(r.databaseUrl).pathname.slice(1)}" with (force)`).catch(() => {});
  await client.end().catch(() => {});
  const nc = await connect({ servers: r.natsUrl, timeout: 2000 }).catch(() => undefined);
  if (nc) {
    await (await nc.jetstreamManager()).streams.delete(r.stream).catch(() => {});
    await nc.close();
  }
  const s3 = s3Client(r.s3);
  try {
    for (;;) {
      const listed = await s3.send(new ListObjectsV2Command({ Bucket: r.bucket }));
      const keys = (listed.Contents ?? []).map((o) => ({ Key: o.Key as string }));
      if (keys.length === 0) break;
      await s3.send(new DeleteObjectsCommand({ Bucket: r.bucket, Delete: { Objects: keys } }));
    }
    await s3.send(new DeleteBucketCommand({ Bucket: r.bucket }));
  } catch {
    // bucket never created
  } finally {
    s3.destroy();
  }
}
