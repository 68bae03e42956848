export * from './consumer.ts';
export * from './nats.ts';
export * from './outbox.ts';
export * from './outbox-purge.ts';
export * from './relay.ts';
