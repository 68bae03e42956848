#!/usr/bin/env node
// Entry of `npm start`, `npm test` and `npm run admin`: plain Node with no dependencies, so it
// runs on a fresh clone. It installs what is missing (npm packages, which bring Bun and Deno),
// then hands over to the Bun script of the command.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const [command, ...args] = process.argv.slice(2);
const bun = join(root, 'node_modules', '.bin', 'bun');

function installIfNeeded() {
  const marker = join(root, 'node_modules', '.package-lock.json');
  const lock = join(root, 'package-lock.json');
  const stale = !existsSync(bun) || !existsSync(marker) || statSync(lock).mtimeMs > statSync(marker).mtimeMs;
  if (!stale) return;
  console.error('Installing npm dependencies…');
  // `npm install` (not `npm ci`): it installs the lockfile's pinned versions too, and npm 11 writes
  // lockfiles without other platforms' optional packages (Bun's, Deno's, Biome's binaries) that
  // `npm ci` then refuses as out of sync.
  const result = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

const scripts = {
  start: ['deploy/local/start.ts'],
  test: ['deploy/local/test.ts'],
  admin: ['services/gateway/src/cli.ts'],
  loadtest: ['loadtest/run.ts'],
  bench: ['loadtest/bench.ts'],
  scale: ['loadtest/scale.ts'],
};
if (command === 'install') {
  installIfNeeded();
  process.exit(0);
}
if (!scripts[command]) {
  console.error(`usage: bootstrap.mjs install|${Object.keys(scripts).join('|')} [args…]`);
  process.exit(2);
}
installIfNeeded();
const child = spawn(bun, [...scripts[command], ...args], { cwd: root, stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
