export * from './cursor.ts';
export * from './read-page.ts';
export * from './request.ts';
