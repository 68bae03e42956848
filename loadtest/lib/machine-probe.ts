// The machine's kernel costs in one line (loadtest/machine-probe.go), for the bench's header: the
// same code lands far apart on machines whose model names match (loadtest/README.md, twenty-second
// session), and what sets them apart is what a system call, a page fault and a wake-up cost.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, toolCacheDir } from '@crm/stack';

/** The probe's line, or why there is none (no Go, a failed build or run); a few seconds. */
export function machineProbe(): string {
  const source = join(repoRoot, 'loadtest', 'machine-probe.go');
  const version = createHash('sha256').update(readFileSync(source)).digest('hex').slice(0, 12);
  const dir = join(toolCacheDir(), 'machine-probe');
  const binary = join(dir, `machine-probe-${version}`);
  if (!existsSync(binary)) {
    mkdirSync(dir, { recursive: true });
    const build = spawnSync('go', ['build', '-trimpath', '-o', binary, source], {
      env: { ...process.env, CGO_ENABLED: '0' },
      encoding: 'utf8',
    });
    if (build.status !== 0) return `unavailable (go build: ${build.error?.message ?? String(build.stderr).trim().slice(-300)})`;
  }
  const run = spawnSync(binary, [], { encoding: 'utf8', timeout: 60_000 });
  return run.status === 0 ? run.stdout.trim() : `unavailable (${run.error?.message ?? String(run.stderr).trim().slice(-300)})`;
}
