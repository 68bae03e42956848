import { m0001Tenants } from './0001_tenants.ts';
import { m0002Policies } from './0002_policies.ts';
import { m0003UnloggedRateLimits } from './0003_unlogged_rate_limits.ts';
import { m0004GcraConsume } from './0004_gcra_consume.ts';
import { m0005InputBounds } from './0005_input_bounds.ts';
import { m0006GcraConsumeParameters } from './0006_gcra_consume_parameters.ts';
import { m0007AuditRetention } from './0007_audit_retention.ts';
import { m0008GcraConsumeStatement } from './0008_gcra_consume_statement.ts';
import { m0009CheapKeyCheck } from './0009_cheap_key_check.ts';
import { m0010GcraWholeIntervals } from './0010_gcra_whole_intervals.ts';

/** Gateway migrations in order; append only. */
export const migrations = [
  m0001Tenants,
  m0002Policies,
  m0003UnloggedRateLimits,
  m0004GcraConsume,
  m0005InputBounds,
  m0006GcraConsumeParameters,
  m0007AuditRetention,
  m0008GcraConsumeStatement,
  m0009CheapKeyCheck,
  m0010GcraWholeIntervals,
];
