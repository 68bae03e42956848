export * from './event-catalog.ts';
export * from './events.ts';
export * from './formats.ts';
export * from './internal.ts';
export * from './resources/index.ts';
export * from './services.ts';
