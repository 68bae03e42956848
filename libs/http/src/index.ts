export * from './errors.ts';
export * from './internal-client.ts';
export * from './kit.ts';
export * from './logger.ts';
export * from './metrics.ts';
export * from './openapi.ts';
export * from './validation.ts';
