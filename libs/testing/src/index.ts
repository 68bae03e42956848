export * from './client.ts';
export * from './poll.ts';
export * from './run-resources.ts';
export * from './stack.ts';
