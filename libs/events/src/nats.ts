import type { Logger } from '@crm/http';
import { connect, type NatsConnection, RetentionPolicy, StorageType } from 'nats';

/** Connects to NATS, retrying forever (also while the first connection is being made). */
export async function connectNats(url: string, name: string, logger: Logger): Promise<NatsConnection> {
  const nc = await connect({ servers: url, name, maxReconnectAttempts: -1, reconnectTimeWait: 500, waitOnFirstConnect: true });
  (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect' || status.type === 'reconnect') logger.warn(`nats ${status.type}`, { server: String(status.data) });
    }
  })().catch(() => {});
  return nc;
}

/** Creates the events stream when missing (subjects `<prefix>.>`, file storage, 7 days). */
export async function ensureStream(nc: NatsConnection, stream: string, subjectPrefix: string): Promise<void> {
  const jsm = await nc.jetstreamManager();
  try {
    await jsm.streams.info(stream);
  } catch {
    try {
      await jsm.streams.add({
        name: stream,
        subjects: [`${subjectPrefix}.>`],
        retention: RetentionPolicy.Limits,
        storage: StorageType.File,
        max_age: 7 * 24 * 3600 * 1e9,
        duplicate_window: 10 * 60 * 1e9,
      });
    } catch (error) {
      // Another process created it between our info() and add().
      if (!(error instanceof Error && /already in use|exists/.test(error.message))) throw error;
    }
  }
}

/** Readiness check: the connection is open and the server answers a flush. */
export async function checkNats(nc: NatsConnection): Promise<void> {
  if (nc.isClosed()) throw new Error('connection closed');
  await nc.flush();
}
