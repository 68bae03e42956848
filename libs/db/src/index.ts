export * from './database.ts';
export * from './list/index.ts';
export * from './migrations.ts';
export * from './retention.ts';
export * from './transaction.ts';
