export * from './infra.ts';
export * from './minio.ts';
export * from './nats-cluster.ts';
export * from './processes.ts';
export * from './tools.ts';
