import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { canConnect, natsServerBinary, waitFor } from './infra.ts';
import { freePort } from './processes.ts';

/** One server of a loopback NATS cluster. */
export interface NatsNode {
  /** `n1`, `n2`, … (its JetStream server name). */
  name: string;
  /** Client port. */
  port: number;
  /** Route port (cluster traffic). */
  clusterPort: number;
  /** Monitoring port (`/healthz`, `/jsz`, `/varz`). */
  monitorPort: number;
  url: string;
  monitorUrl: string;
  /** The running process; undefined while the node is killed. */
  process?: ChildProcess;
}

export interface NatsCluster {
  nodes: NatsNode[];
  /** Every node's client URL, comma-separated: the value for `NATS_URL`. */
  url: string;
  /** Sends `signal` (SIGKILL by default) to one node and waits for it to exit. */
  kill(index: number, signal?: NodeJS.Signals): Promise<void>;
  /** Starts a killed node again with the same name, ports and data, and waits for its client port. */
  restart(index: number): Promise<void>;
  /** Stops every node (SIGTERM) and, when `removeData`, deletes the data directory. */
  stop(options?: { removeData?: boolean }): Promise<void>;
}

/**
 * Starts a JetStream cluster of `size` (3) nats-server processes on loopback, each with its own
 * `server_name`, client port, route port and `store_dir` under `dataDir`, all in cluster `name`
 * with routes to each other (the configuration files are written to `dataDir/<node>.conf`).
 * Resolves once every client port answers and JetStream has a meta leader (a stream can be
 * created). JetStream clustering needs nats-server ≥ 2.2.
 */
export async function startNatsCluster(options: {
  dataDir: string;
  size?: number;
  name?: string;
  /** Client ports; free ports when omitted. */
  ports?: number[];
  log?: (m: string) => void;
}): Promise<NatsCluster> {
  const size = options.size ?? 3;
  const clusterName = options.name ?? 'crm';
  const log = options.log ?? (() => {});
  const binary = natsServerBinary();
  mkdirSync(options.dataDir, { recursive: true });
  const nodes: NatsNode[] = [];
  for (let i = 0; i < size; i++) {
    const port = options.ports?.[i] ?? (await freePort());
    const monitorPort = await freePort();
    nodes.push({
      name: `n${i + 1}`,
      port,
      clusterPort: await freePort(),
      monitorPort,
      url: `nats://127.0.0.1:${port}`,
      monitorUrl: `http://127.0.0.1:${monitorPort}`,
    });
  }
  const routes = nodes.map((n) => `nats-route://127.0.0.1:${n.clusterPort}`);
  for (const node of nodes) {
    const storeDir = join(options.dataDir, node.name);
    mkdirSync(storeDir, { recursive: true });
    writeFileSync(
      join(options.dataDir, `${node.name}.conf`),
      [
        `server_name: ${node.name}`,
        `listen: 127.0.0.1:${node.port}`,
        `http: 127.0.0.1:${node.monitorPort}`,
        `jetstream { store_dir: ${JSON.stringify(storeDir)} }`,
        'cluster {',
        `  name: ${clusterName}`,
        `  listen: 127.0.0.1:${node.clusterPort}`,
        `  routes: [${routes.filter((r) => !r.endsWith(`:${node.clusterPort}`)).join(', ')}]`,
        '}',
        '',
      ].join('\n'),
    );
  }

  const start = async (node: NatsNode) => {
    const logFile = openSync(join(options.dataDir, `${node.name}.log`), 'a');
    node.process = spawn(binary, ['-c', join(options.dataDir, `${node.name}.conf`)], { stdio: ['ignore', logFile, logFile] });
    await waitFor(`nats-server ${node.name}`, () => canConnect('127.0.0.1', node.port), 20_000);
  };
  const stopNode = async (node: NatsNode, signal: NodeJS.Signals) => {
    const child = node.process;
    node.process = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    await exited;
  };

  log(`starting a ${size}-node NATS JetStream cluster (${nodes.map((n) => n.port).join(', ')})…`);
  await Promise.all(nodes.map(start));
  const url = nodes.map((n) => n.url).join(',');
  await waitFor('the JetStream meta leader', async () => (await metaLeader(nodes)) !== undefined, 30_000);

  return {
    nodes,
    url,
    kill: (index, signal = 'SIGKILL') => stopNode(nodes[index] as NatsNode, signal),
    restart: (index) => start(nodes[index] as NatsNode),
    async stop({ removeData = true } = {}) {
      await Promise.all(nodes.map((n) => stopNode(n, 'SIGTERM')));
      if (removeData) rmSync(options.dataDir, { recursive: true, force: true });
    },
  };
}

/** What a node's `/jsz` monitoring endpoint says (undefined when it does not answer). */
export async function jsz(node: NatsNode, query = ''): Promise<any | undefined> {
  try {
    const response = await fetch(`${node.monitorUrl}/jsz${query}`, { signal: AbortSignal.timeout(1000) });
    return response.ok ? await response.json() : undefined;
  } catch {
    return undefined;
  }
}

/** The JetStream meta leader's server name, when every running node agrees on one. */
export async function metaLeader(nodes: NatsNode[]): Promise<string | undefined> {
  const running = nodes.filter((n) => n.process);
  const leaders = await Promise.all(running.map(async (n) => (await jsz(n))?.meta_cluster?.leader as string | undefined));
  const first = leaders[0];
  return first && leaders.every((l) => l === first) ? first : undefined;
}

/**
 * The replication state of a stream as its leader reports it (a follower does not list itself):
 * the leader and, per other replica, whether it is current. Undefined while no running node
 * reports itself as the stream's leader.
 */
export async function streamCluster(
  nodes: NatsNode[],
  stream: string,
): Promise<{ leader: string; replicas: { name: string; current: boolean; lag?: number }[]; messages: number } | undefined> {
  for (const node of nodes.filter((n) => n.process)) {
    const info = await jsz(node, '?accounts=true&streams=true');
    for (const account of info?.account_details ?? []) {
      const found = (account.stream_detail ?? []).find((s: any) => s.name === stream);
      if (found?.cluster?.leader === node.name) {
        return {
          leader: found.cluster.leader,
          replicas: (found.cluster.replicas ?? []).map((r: any) => ({ name: r.name, current: Boolean(r.current), lag: r.lag })),
          messages: found.state?.messages ?? 0,
        };
      }
    }
  }
  return undefined;
}
