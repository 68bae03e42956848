export * from './client.ts';
export * from './stack.ts';
