import type { EventEnvelope } from '@crm/contracts';
import { PoisonMessageError, startConsumer } from '@crm/events';
import type { Logger } from '@crm/http';
import type { Kysely } from 'kysely';
import type { NatsConnection } from 'nats';
import type { DocumentsDatabase } from '../db/database.ts';
import { forgetContact, forgetOpportunity } from '../documents/links.ts';

export interface DeletionsConsumerOptions {
  nc: NatsConnection;
  db: Kysely<DocumentsDatabase>;
  logger: Logger;
  stream: string;
  subjectPrefix: string;
}

function deletedId(event: EventEnvelope): number {
  const id = Number((event.data as { id?: unknown } | null)?.id);
  if (!Number.isSafeInteger(id) || id <= 0) throw new PoisonMessageError(`${event.type} without a numeric data.id`);
  return id;
}

/**
 * The durable `documents` consumer: `contact.deleted` clears that contact's links and
 * `opportunity.deleted` detaches its documents; documents and files stay. Handling is
 * idempotent, so a redelivered event changes nothing more.
 */
export function startDeletionsConsumer({ nc, db, logger, stream, subjectPrefix }: DeletionsConsumerOptions) {
  return startConsumer({
    nc,
    stream,
    subjectPrefix,
    durable: 'documents',
    filter: '*.deleted',
    logger,
    async handle(event) {
      if (event.type === 'contact.deleted') {
        const cleared = await forgetContact(db, event.tenant_id, deletedId(event));
        logger.info('contact links cleared', { event_id: event.id, documents: cleared });
      } else if (event.type === 'opportunity.deleted') {
        const detached = await forgetOpportunity(db, event.tenant_id, deletedId(event));
        logger.info('opportunity attachments cleared', { event_id: event.id, documents: detached });
      }
    },
  });
}
