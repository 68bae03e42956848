// A PostgreSQL of a test's own, for fault tests that stop the database: initdb as the `postgres`
// OS user in a temporary directory, on a free port — never the shared local cluster.
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@crm/stack';

const bin = (() => {
  const versions = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a)) : [];
  const dir = versions.map((v) => `/usr/lib/postgresql/${v}/bin`).find((d) => existsSync(join(d, 'initdb')));
  if (!dir) throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin');
  return (name: string) => join(dir, name);
})();

/** The command line that runs `args` as the `postgres` OS user (initdb and the server refuse root). */
function asPostgresUser(args: string[]): string[] {
  const isPostgres = spawnSync('id', ['-un'], { encoding: 'utf8' }).stdout.trim() === 'postgres';
  return isPostgres ? args : ['runuser', '-u', 'postgres', '--', ...args];
}

/** Runs a PostgreSQL tool as `postgres`, blocking (set-up only). */
function runAsPostgres(args: string[]): string {
  const command = asPostgresUser(args);
  const result = spawnSync(command[0] as string, command.slice(1), { encoding: 'utf8', timeout: 60_000 });
  if (result.status !== 0) throw new Error(`${args.join(' ')} failed: ${result.stderr}${result.stdout}`);
  return result.stdout;
}

/** Runs a PostgreSQL tool as `postgres` without blocking the event loop (a test's load keeps going). */
function runAsPostgresAsync(args: string[]): Promise<void> {
  const command = asPostgresUser(args);
  return new Promise((resolve, reject) => {
    const child = spawn(command[0] as string, command.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${args.join(' ')} failed (${code}): ${stderr}`))));
  });
}

export interface OwnPostgres {
  port: number;
  /** The server's `postgres` database, as `startStack({ baseDb })` takes it. */
  url: string;
  /** Starts the server (again) and waits until it accepts connections (crash recovery included). */
  start(): Promise<void>;
  /** A crash: `pg_ctl stop -m immediate` (no shutdown checkpoint, every connection cut, unlogged tables reset on recovery). */
  crash(): Promise<void>;
  /** Stops the server if it runs and removes its directory. */
  remove(): Promise<void>;
}

/** initdb in a temporary directory (`<prefix>…`), started on a free loopback port. */
export async function startOwnPostgres(prefix = 'crm-pg-'): Promise<OwnPostgres> {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  if (process.getuid?.() === 0) chownSync(root, uid, gid);
  const dataDir = join(root, 'data');
  runAsPostgres([bin('initdb'), '-D', dataDir, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const pgCtl = (...args: string[]) => runAsPostgresAsync([bin('pg_ctl'), '-D', dataDir, ...args]);
  const start = () =>
    pgCtl('-l', join(root, 'postgres.log'), '-w', '-t', '30', '-o', `-p ${port} -k ${root} -c listen_addresses=127.0.0.1`, 'start');
  await start();
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    crash: () => pgCtl('-m', 'immediate', '-w', 'stop'),
    async remove() {
      if (existsSync(join(dataDir, 'postmaster.pid'))) await pgCtl('-m', 'immediate', '-w', 'stop').catch(() => {});
      rmSync(root, { recursive: true, force: true });
    },
  };
}
