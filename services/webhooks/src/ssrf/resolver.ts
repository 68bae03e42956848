import { type LookupAddress, lookup } from 'node:dns';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';

/** Resolves a host name to every address it has (of one family when asked). */
export type Resolve = (hostname: string, family?: number) => Promise<LookupAddress[]>;

/** The system resolver (getaddrinfo, so /etc/hosts too), every address. */
export const systemResolve: Resolve = (hostname, family = 0) =>
  new Promise((resolve, reject) => lookup(hostname, { family, all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))));

class HostNotFoundError extends Error {
  override name = 'HostNotFoundError';
  readonly code = 'ENOTFOUND';
}

/** The addresses of `hostname` in a hosts file (`address name…` per line, `#` comments). */
function hostsFileEntries(text: string, hostname: string): LookupAddress[] {
  const found: LookupAddress[] = [];
  for (const line of text.split('\n')) {
    const [address, ...names] = (line.split('#')[0] as string).trim().split(/\s+/);
    if (!address || !names.some((n) => n.toLowerCase() === hostname)) continue;
    const family = isIP(address);
    if (family === 0) throw new Error(`WEBHOOK_TEST_HOSTS_FILE: "${address}" is not an IP address`);
    found.push({ address, family });
  }
  return found;
}

/**
 * TESTS ONLY (`WEBHOOK_TEST_HOSTS_FILE`): names under `.test` (RFC 6761: never resolved on the
 * Internet, so no real name can be shadowed) are looked up in a hosts file, re-read on every
 * lookup so a test can change an answer between registration and delivery (DNS rebinding).
 * Other names go to the system resolver. The answers go through the SSRF policy like any others:
 * the file can only make a name resolve, never make an address allowed.
 */
export function testHostsResolve(file: string, fallback: Resolve = systemResolve): Resolve {
  return async (hostname, family = 0) => {
    const name = hostname.toLowerCase().replace(/\.$/, '');
    if (!name.endsWith('.test')) return fallback(hostname, family);
    const entries = hostsFileEntries(readFileSync(file, 'utf8'), name).filter((a) => family === 0 || a.family === family);
    if (entries.length === 0) throw new HostNotFoundError(`${hostname} is not in WEBHOOK_TEST_HOSTS_FILE`);
    return entries;
  };
}
