// `npm test`: makes sure PostgreSQL, NATS and MinIO are there (building MinIO on first use),
// then runs every test with Bun's test runner against them.
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ensureMinio, ensureNats, ensurePostgres, repoRoot } from '@crm/stack';
import { localSettings } from './env.ts';

const settings = localSettings();
const log = (m: string) => console.error(m);
mkdirSync(settings.dataDir, { recursive: true });
await ensurePostgres(settings.databaseUrl, log);
await ensureNats(settings.natsUrl, settings.dataDir, log);
// Left running for the next run: parallel test runs share one MinIO, each with its own bucket.
await ensureMinio(settings.s3, settings.dataDir, log, true);

const child = spawn(join(repoRoot, 'node_modules', '.bin', 'bun'), ['test', '--timeout', '120000', ...process.argv.slice(2)], {
  cwd: repoRoot,
  stdio: 'inherit',
});
child.on('exit', (code) => process.exit(code ?? 1));
