export * from './fingerprint.ts';
export * from './migration.ts';
export * from './plugin.ts';
export * from './purge.ts';
export * from './request-write.ts';
