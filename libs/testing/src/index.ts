export * from './client.ts';
export * from './nats-server.ts';
export * from './poll.ts';
export * from './receiver.ts';
export * from './run-resources.ts';
export * from './stack.ts';
