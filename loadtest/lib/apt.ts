import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * The path of a Debian package's binary, installing the package with apt-get when none of `paths`
 * exists (the bench and scale scripts bring their own nginx and wrk on a fresh machine).
 */
export function debianBinary(pkg: string, paths: string[], log: (m: string) => void): string {
  const present = paths.find(existsSync);
  if (present) return present;
  log(`${pkg} is not installed; installing Debian’s ${pkg} with apt-get…`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  const result = spawnSync('apt-get', ['install', '-y', '-qq', pkg], { stdio: 'inherit', env });
  const found = paths.find(existsSync);
  if (result.status !== 0 || !found) throw new Error(`could not install ${pkg} (apt-get install -y ${pkg})`);
  return found;
}
