import { expect, test } from 'bun:test';
import { freePort } from './processes.ts';

test('freePort never hands out the same port twice, sequentially or concurrently', async () => {
  // The kernel picks from ~28,000 ports and may pick a released one again: 1,000 picks alone
  // repeat one almost surely (on a Debian VM, the first repeat came within 200).
  const sequential: number[] = [];
  for (let i = 0; i < 1000; i++) sequential.push(await freePort());
  const concurrent = await Promise.all(Array.from({ length: 50 }, () => freePort()));
  const all = [...sequential, ...concurrent];
  expect(new Set(all).size).toBe(all.length);
  for (const port of all) expect(port).toBeGreaterThan(0);
});
