import { type LookupAddress, lookup } from 'node:dns';
import { isIP } from 'node:net';
import { refusalReason } from './address-policy.ts';
import type { Network } from './cidr.ts';

/** A connection refused because the target resolves to a forbidden address. */
export class ForbiddenTargetError extends Error {
  override name = 'ForbiddenTargetError';
}

/** The host of a URL without IPv6 brackets. */
export function urlHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

function resolveAll(host: string): Promise<LookupAddress[]> {
  if (isIP(host)) return Promise.resolve([{ address: host, family: isIP(host) }]);
  return new Promise((resolve, reject) => lookup(host, { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))));
}

function firstRefusal(addresses: LookupAddress[], allowed: Network[]): string | undefined {
  for (const { address } of addresses) {
    const reason = refusalReason(address, allowed);
    if (reason) return `resolves to ${address}, a ${reason} address, which webhooks may not target`;
  }
  return undefined;
}

/**
 * Why a webhook URL may not be registered (it does not resolve, or any of its addresses is
 * private, loopback, link-local or otherwise non-public and not in the allowed nets).
 */
export async function targetRefusal(url: URL, allowed: Network[]): Promise<string | undefined> {
  let addresses: LookupAddress[];
  try {
    addresses = await resolveAll(urlHost(url));
  } catch {
    return 'host does not resolve';
  }
  if (addresses.length === 0) return 'host does not resolve';
  return firstRefusal(addresses, allowed);
}

type LookupCallback = (err: Error | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for node:http(s) requests that re-checks every resolved address at connect time,
 * so a DNS answer that changed since registration (rebinding) cannot reach a forbidden address.
 */
export function guardedLookup(allowed: Network[]) {
  return (hostname: string, options: { all?: boolean; family?: number } | number, callback: LookupCallback) => {
    const opts = typeof options === 'number' ? { family: options } : (options ?? {});
    lookup(hostname, { family: opts.family ?? 0, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const refusal = firstRefusal(addresses, allowed);
      if (refusal) return callback(new ForbiddenTargetError(`${hostname} ${refusal}`), []);
      if (opts.all) return callback(null, addresses);
      const [first] = addresses;
      if (!first) return callback(new Error(`${hostname} does not resolve`), []);
      callback(null, first.address, first.family);
    });
  };
}

/** The connect-time check for URLs whose host is an IP literal (node skips `lookup` for those). */
export function literalTargetRefusal(url: URL, allowed: Network[]): string | undefined {
  const host = urlHost(url);
  if (!isIP(host)) return undefined;
  return firstRefusal([{ address: host, family: isIP(host) }], allowed);
}
