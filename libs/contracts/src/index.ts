export * from './events.ts';
export * from './internal.ts';
export * from './services.ts';
