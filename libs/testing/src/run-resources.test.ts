// The teardown of a run against the real PostgreSQL: endPool() returns only once the pool's
// connections have closed, so the `drop database … with (force)` after it terminates none of them
// (pg-pool's own end() resolves first, and a connection terminated while closing came back as an
// unhandled 'error' between tests).
import { expect, test } from 'bun:test';
import pg from 'pg';
import { dropRunResources, endPool, prepareRun } from './run-resources.ts';

test('endPool returns once every connection of the pool has closed; the drop after it terminates none', async () => {
  const run = await prepareRun('test');
  const pool = new pg.Pool({ connectionString: run.databaseUrl, max: 4 });
  let connected = 0;
  let removed = 0;
  pool.on('connect', () => connected++);
  pool.on('remove', () => removed++);
  try {
    // Four idle connections, as a stack's pool holds right after a test's last queries.
    await Promise.all([1, 2, 3, 4].map(() => pool.query('select pg_sleep(0.02)')));
    expect(connected).toBe(4);
    await endPool(pool);
    expect(removed).toBe(4);
    expect(pool.totalCount).toBe(0);
  } finally {
    await dropRunResources(run);
  }
});
