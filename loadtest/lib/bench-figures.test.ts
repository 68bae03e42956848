// The bench's per-request arithmetic (pure logic, no stack): what its verdicts and the README's
// tables (loadtest/bench-table.ts) are computed with.
import { describe, expect, test } from 'bun:test';
import { cpuPerRequest, GATEWAY_ITSELF, groupsPerRequest, type Measured, partPerRequest, perRound } from './bench-figures.ts';

/** One case of one round: `requests` answered, CPU ms per group (kernel part apart), `total` over the groups not `partOf` another. */
function measured(requests: number, groups: Record<string, number>, kernel: Record<string, number>, total: number): Measured {
  return {
    figures: { rps: requests / 5, p50: 1, p90: 2, p99: 3, failed: 0, requests },
    cpu: { seconds: 5, machine: 0.9, steal: 0, generator: 0.05, groups, kernel, total },
    statements: { sales: 1, gateway: 0.1 },
  };
}

// (b): the gateway 600 ms (150 of it kernel), its PostgreSQL backends 200 (part of postgres), sales
// 900, postgres 500 in all; the total counts gw-pg once, inside postgres.
const b = measured(4000, { gateway: 600, 'gw-pg': 200, sales: 900, postgres: 500 }, { gateway: 150, 'gw-pg': 50 }, 2000);
// (p): the bare proxy 300 ms (100 kernel), sales 900, postgres 300.
const p = measured(5000, { proxy: 300, sales: 900, postgres: 300 }, { proxy: 100 }, 1500);

describe('per-request CPU of a bench case', () => {
  test('every watched process together: the total over the requests', () => {
    expect(cpuPerRequest(b)).toBeCloseTo(0.5, 10);
    expect(cpuPerRequest(p)).toBeCloseTo(0.3, 10);
  });

  test('the gateway itself is its process and its PostgreSQL backends', () => {
    expect(GATEWAY_ITSELF).toEqual(['gateway', 'gw-pg']);
    expect(groupsPerRequest(b, GATEWAY_ITSELF)).toBeCloseTo(0.2, 10);
    expect(groupsPerRequest(b, ['absent'])).toBe(0);
  });

  test("a group's own code and the kernel's work for it, apart", () => {
    expect(partPerRequest(b, 'gateway', 'user')).toBeCloseTo(0.1125, 10);
    expect(partPerRequest(b, 'gateway', 'kernel')).toBeCloseTo(0.0375, 10);
    expect(partPerRequest(p, 'proxy', 'user')).toBeCloseTo(0.04, 10);
    expect(partPerRequest(p, 'proxy', 'kernel')).toBeCloseTo(0.02, 10);
  });

  test('a case that answered nothing divides by one, not by zero', () => {
    const idle = measured(0, { gateway: 10 }, {}, 10);
    expect(cpuPerRequest(idle)).toBe(10);
    expect(partPerRequest(idle, 'gateway', 'kernel')).toBe(0);
  });
});

describe('perRound', () => {
  test('one value per round from the cases of that round, NaN where one is missing', () => {
    const rounds: Record<string, Measured>[] = [{ b, p }, { b }, { b: p, p: b }];
    const values = perRound(rounds, ['b', 'p'], (over, under) => cpuPerRequest(over) / cpuPerRequest(under));
    expect(values).toHaveLength(3);
    expect(values[0]).toBeCloseTo(5 / 3, 10);
    expect(values[1]).toBeNaN();
    expect(values[2]).toBeCloseTo(3 / 5, 10);
  });
});
