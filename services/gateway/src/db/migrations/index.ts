import { m0001Tenants } from './0001_tenants.ts';

/** Gateway migrations in order; append only. */
export const migrations = [m0001Tenants];
