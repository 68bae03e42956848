import { connect, type NatsConnection, RetentionPolicy, StorageType, type StreamConfig } from 'nats';
import type { Logger } from './logger.ts';

/** The servers of a NATS URL setting: one URL or a comma-separated list (a cluster). */
export function serverList(servers: string | string[]): string[] {
  return (Array.isArray(servers) ? servers : servers.split(',')).map((s) => s.trim()).filter((s) => s !== '');
}

/**
 * Connects to NATS — one server or every server of a cluster (`a,b,c` or a list) — retrying
 * forever, also while the first connection is being made. After a server is lost the client
 * moves to another one of the list (or one the cluster advertises) and keeps its subscriptions.
 */
export async function connectNats(servers: string | string[], name: string, logger: Logger): Promise<NatsConnection> {
  const nc = await connect({
    servers: serverList(servers),
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    waitOnFirstConnect: true,
    // A server that vanished without closing its sockets (a node lost in a cluster) is noticed
    // within ~30 s instead of the client's default 4 minutes.
    pingInterval: 10_000,
    maxPingOut: 3,
  });
  (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect' || status.type === 'reconnect') logger.warn(`nats ${status.type}`, { server: String(status.data) });
    }
  })().catch(() => {});
  return nc;
}

const NANOS_PER_SECOND = 1_000_000_000;

/**
 * Replica counts asked for per stream name in this process (by the first `ensureStream` call that
 * names one, normally at boot from `NATS_STREAM_REPLICAS`), so later calls without a count — the
 * consumers re-checking the stream after a reconnect — never turn a replicated stream back to R1.
 */
const replicasByStream = new Map<string, number>();

/** Records the replica count this process wants for `stream` (boot calls it with `NATS_STREAM_REPLICAS`). */
export function setStreamReplicas(stream: string, replicas: number): void {
  replicasByStream.set(stream, replicas);
}

/** The events stream's configuration: subjects `<prefix>.>`, file storage, 7 days, 10-minute duplicate window. */
export function eventsStreamConfig(stream: string, subjectPrefix: string, replicas = 1): Partial<StreamConfig> & { name: string } {
  return {
    name: stream,
    subjects: [`${subjectPrefix}.>`],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    max_age: 7 * 24 * 3600 * NANOS_PER_SECOND,
    duplicate_window: 10 * 60 * NANOS_PER_SECOND,
    num_replicas: replicas,
  };
}

/** Settings an existing stream may be updated to; retention and storage can only be chosen at creation. */
const updatable = ['subjects', 'max_age', 'duplicate_window', 'num_replicas'] as const;
const fixed = ['retention', 'storage'] as const;

const same = (a: unknown, b: unknown) =>
  Array.isArray(a) && Array.isArray(b) ? a.length === b.length && [...a].sort().every((v, i) => v === [...b].sort()[i]) : a === b;

export interface EnsureStreamOptions {
  /** Replicas of the stream (1..5); default: what this process asked for before, else 1. */
  replicas?: number;
  logger?: Logger;
  /** How long each JetStream API request may take (default the client's 5 s). */
  timeoutMs?: number;
}

/** What `ensureStream` did: created the stream, updated the named settings, or found it as wanted. */
export type EnsureStreamResult = { action: 'created' } | { action: 'updated'; changed: string[] } | { action: 'unchanged' };

/**
 * Makes the events stream exist with its configuration: created when missing (with its replica
 * count), and updated when an existing stream differs in subjects, max age, duplicate window or
 * replicas (e.g. `NATS_STREAM_REPLICAS` raised from 1 to 3 after moving to a cluster). A stream
 * whose retention or storage differs cannot be changed in place; that is logged as an error and
 * the stream is used as it is (its messages are never deleted to recreate it).
 */
export async function ensureStream(
  nc: NatsConnection,
  stream: string,
  subjectPrefix: string,
  options: EnsureStreamOptions = {},
): Promise<EnsureStreamResult> {
  if (options.replicas !== undefined) replicasByStream.set(stream, options.replicas);
  const wanted = eventsStreamConfig(stream, subjectPrefix, options.replicas ?? replicasByStream.get(stream) ?? 1);
  const jsm = await nc.jetstreamManager(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs });
  let current: StreamConfig;
  try {
    current = (await jsm.streams.info(stream)).config;
  } catch (error) {
    if (!isNotFound(error)) throw error;
    try {
      await jsm.streams.add(wanted);
      options.logger?.info('events stream created', { stream, replicas: wanted.num_replicas });
      return { action: 'created' };
    } catch (addError) {
      // Another process created it between our info() and add(): check it like an existing one.
      if (!(addError instanceof Error && /already in use|exists/.test(addError.message))) throw addError;
      current = (await jsm.streams.info(stream)).config;
    }
  }
  const changed = updatable.filter((key) => !same(current[key], wanted[key]));
  const stuck = fixed.filter((key) => current[key] !== wanted[key]);
  if (stuck.length > 0) {
    options.logger?.error('events stream settings that cannot be changed in place differ; using the stream as it is', {
      stream,
      settings: stuck.map((key) => `${key}: ${current[key]} (wanted ${wanted[key]})`),
    });
  }
  if (changed.length === 0) return { action: 'unchanged' };
  await jsm.streams.update(stream, Object.fromEntries(changed.map((key) => [key, wanted[key]])));
  options.logger?.warn('events stream configuration updated', {
    stream,
    changed: changed.map((key) => `${key}: ${JSON.stringify(current[key])} → ${JSON.stringify(wanted[key])}`),
  });
  return { action: 'updated', changed: [...changed] };
}

/** Whether a JetStream API error says the stream or consumer does not exist. */
export function isNotFound(error: unknown): boolean {
  const e = error as { code?: string; api_error?: { err_code?: number }; message?: string };
  // 10059 stream not found, 10014 consumer not found.
  return e?.api_error?.err_code === 10059 || e?.api_error?.err_code === 10014 || /not found/i.test(String(e?.message ?? ''));
}

/** Readiness check: the connection is open and the server answers a flush. */
export async function checkNats(nc: NatsConnection): Promise<void> {
  if (nc.isClosed()) throw new Error('connection closed');
  await nc.flush();
}
