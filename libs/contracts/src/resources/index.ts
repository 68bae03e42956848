export * from './common.ts';
export * from './contact.ts';
export * from './document.ts';
export * from './opportunity.ts';
export * from './order.ts';
export * from './product.ts';
