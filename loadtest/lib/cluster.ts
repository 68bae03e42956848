import { join } from 'node:path';
import { type ServiceName, services } from '@crm/contracts';
import {
  freePort,
  type NatsCluster,
  type ProcessName,
  processNames,
  repoRoot,
  type ServiceProcess,
  spawnService,
  startNatsCluster,
  waitReady,
} from '@crm/stack';
import { dropRunResources, endPool, prepareRun } from '@crm/testing';
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
 * each other points at a balancer. With `natsNodes` (default 3) a JetStream cluster of that many
 * nodes of its own: the processes get every node's URL in `NATS_URL` and run the events stream
 * with that many replicas (at most 3). Own database, JetStream stream, bucket and NATS cluster,
 * removed by stop().
 */
export async function startCluster(options: { replicas?: number; natsNodes?: number; log?: (m: string) => void } = {}) {
  const replicas = options.replicas ?? 2;
  const natsNodes = options.natsNodes ?? 3;
  const log = options.log ?? console.log;
  const natsDir = join(repoRoot, '.data', 'scale-nats', `${Date.now().toString(36)}`);
  const nats: NatsCluster | undefined = natsNodes > 1 ? await startNatsCluster({ dataDir: natsDir, size: natsNodes, log }) : undefined;
  const run = await prepareRun('scale', { log, natsUrl: nats?.url }).catch(async (error) => {
    await nats?.stop();
    throw error;
  });
  const { runId, databaseUrl, dataDir } = run;

  const balancerPorts = Object.fromEntries(await Promise.all(processNames.map(async (n) => [n, await freePort()]))) as Record<
    ProcessName,
    number
  >;
  const replicaPorts = Object.fromEntries(
    await Promise.all(processNames.map(async (n) => [n, await Promise.all(Array.from({ length: replicas }, () => freePort()))])),
  ) as Record<ProcessName, number[]>;
  const env: Record<string, string> = { ...run.env, LOG_LEVEL: 'warn', NATS_STREAM_REPLICAS: String(Math.min(natsNodes, 3)) };
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
    await endPool(pool);
    await dropRunResources(run);
    await nats?.stop();
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
    /** The NATS cluster of the run (undefined with natsNodes 1: the shared local server). */
    nats,
    stream: run.stream,
    adminToken: run.adminToken,
    sql: (text: string, params: unknown[] = []) => pool.query(text, params),
    stop: stopAll,
  };
}

export type Cluster = Awaited<ReturnType<typeof startCluster>>;
