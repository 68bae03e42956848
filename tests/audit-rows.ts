// How the gateway tests wait for audit records: the recorder writes them in batches after the
// answer (AUDIT_FLUSH_MS), so a test reads gateway.audit_logs until they are there.
import { pollUntil, type Stack } from '@crm/testing';

/** The audit rows matching `where` (SQL with `params` as $1, $2, …), in id order, once there are `expected`. */
export function auditRowsUntil(stack: Stack, where: string, params: unknown[], expected: number): Promise<any[]> {
  return pollUntil(
    `${expected} audit rows where ${where}`,
    async () => (await stack.sql(`select * from gateway.audit_logs where ${where} order by id`, params)).rows,
    (rows) => rows.length >= expected,
  );
}
