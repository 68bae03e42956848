import { type EventPayload, eventPayloadErrors } from '@crm/contracts';
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

/** The deleted resource's id, once the payload is checked against its type's schema (contract §16). */
function deletedId(type: 'contact.deleted' | 'opportunity.deleted', data: unknown): number {
  const problems = eventPayloadErrors(type, data);
  // A payload that does not conform is never acted on: the consumer terminates it and logs why.
  if (problems.length > 0) throw new PoisonMessageError(`${type} payload does not conform: ${problems.join('; ')}`);
  return (data as EventPayload<typeof type>).id;
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
        const contactId = deletedId(event.type, event.data);
        const cleared = await forgetContact(db, event.tenant_id, contactId);
        logger.info('contact links cleared', { event_id: event.id, documents: cleared });
      } else if (event.type === 'opportunity.deleted') {
        const opportunityId = deletedId(event.type, event.data);
        const detached = await forgetOpportunity(db, event.tenant_id, opportunityId);
        logger.info('opportunity attachments cleared', { event_id: event.id, documents: detached });
      }
    },
  });
}
