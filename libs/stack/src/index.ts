export * from './infra.ts';
export * from './processes.ts';
export * from './tools.ts';
