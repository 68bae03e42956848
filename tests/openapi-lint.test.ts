// The served OpenAPI document passes two independent linters with nothing to report: Redocly
// (`redocly.yaml`: its recommended rules) and Spectral (`.spectral.yaml`: spectral:oas). Both
// check the examples against their schemas too.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Stack, sharedStack } from '@crm/testing';

const ROOT = join(import.meta.dir, '..');
let stack: Stack;
let dir: string;
let file: string;

beforeAll(async () => {
  stack = await sharedStack();
  const res = await fetch(`${stack.gatewayUrl}/openapi/v1.yaml`);
  expect(res.status).toBe(200);
  dir = mkdtempSync(join(tmpdir(), 'crm-openapi-lint-'));
  file = join(dir, 'openapi.yaml');
  writeFileSync(file, await res.text());
}, 180_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs a linter's CLI from node_modules/.bin and returns its standard output (JSON) and exit code. */
async function run(bin: string, args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  const child = Bun.spawn([join(ROOT, 'node_modules', '.bin', bin), ...args], {
    cwd: ROOT,
    // No telemetry or update check (the machine has no network; they would only slow the run).
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_UPDATE_NOTIFIER: '1' },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { stdout, stderr, code };
}

describe('OpenAPI document lint', () => {
  test('Redocly (recommended): 0 errors, 0 warnings', async () => {
    const { stdout, stderr, code } = await run('redocly', ['lint', file, '--config', join(ROOT, 'redocly.yaml'), '--format=json']);
    let report: {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
    };
    try {
      report = JSON.parse(stdout);
    } catch {
      throw new Error(`redocly gave no JSON report (exit ${code}): ${stdout.slice(0, 500)} ${stderr.slice(0, 2000)}`);
    }
    const problems = report.problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer}`);
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    expect(code).toBe(0);
  }, 120_000);

  test('Spectral (spectral:oas): 0 errors, 0 warnings', async () => {
    const { stdout, stderr, code } = await run('spectral', [
      'lint',
      file,
      '--ruleset',
      join(ROOT, '.spectral.yaml'),
      '--format',
      'json',
      '--quiet',
    ]);
    let results: { code: string; message: string; severity: number; path: (string | number)[] }[];
    try {
      results = JSON.parse(stdout);
    } catch {
      throw new Error(`spectral gave no JSON report (exit ${code}): ${stdout.slice(0, 500)} ${stderr.slice(0, 2000)}`);
    }
    // Severity 0 is an error, 1 a warning (2 information, 3 a hint).
    const problems = results.filter((r) => r.severity <= 1).map((r) => `${r.code}: ${r.message} at ${r.path.join('/')}`);
    expect(problems).toEqual([]);
    expect(code).toBe(0);
  }, 120_000);
});
