import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { type Network, parseAllowedNets, refusalReason } from './address-policy.ts';
import { type Resolve, systemResolve, testHostsResolve } from './resolver.ts';

/** Where webhooks may connect: global unicast addresses, plus `allowedNets`, found through `resolve`. */
export interface TargetPolicy {
  /** `WEBHOOK_ALLOWED_NETS`: development and tests only. */
  allowedNets: Network[];
  resolve: Resolve;
}

/**
 * The policy from configuration; throws on a malformed `WEBHOOK_ALLOWED_NETS`, or on a
 * `WEBHOOK_TEST_HOSTS_FILE` (tests only) under `NODE_ENV=production`.
 */
export function createTargetPolicy(config: {
  WEBHOOK_ALLOWED_NETS: string;
  WEBHOOK_TEST_HOSTS_FILE: string;
  NODE_ENV: string;
}): TargetPolicy {
  const allowedNets = parseAllowedNets(config.WEBHOOK_ALLOWED_NETS);
  if (config.WEBHOOK_TEST_HOSTS_FILE === '') return { allowedNets, resolve: systemResolve };
  if (config.NODE_ENV === 'production')
    throw new Error('WEBHOOK_TEST_HOSTS_FILE is for tests only and may not be set when NODE_ENV=production');
  return { allowedNets, resolve: testHostsResolve(config.WEBHOOK_TEST_HOSTS_FILE) };
}

/** A connection refused because the target resolves to a forbidden address. */
export class ForbiddenTargetError extends Error {
  override name = 'ForbiddenTargetError';
}

const ONLY_GLOBAL = 'webhooks may only target global unicast addresses';

/** The host of a URL without IPv6 brackets (WHATWG URL has already normalised IPv4 forms such as 0x7f.1). */
export function urlHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

function firstRefusal(addresses: LookupAddress[], allowed: Network[]): string | undefined {
  for (const { address } of addresses) {
    const reason = refusalReason(address, allowed);
    if (reason) return `resolves to ${address}, ${reason}; ${ONLY_GLOBAL}`;
  }
  return undefined;
}

/** Why the URL's host, when it is an IP literal, may not be targeted (undefined: allowed, or not a literal). */
export function literalTargetRefusal(url: URL, allowed: Network[]): string | undefined {
  const host = urlHost(url);
  if (!isIP(host)) return undefined;
  const reason = refusalReason(host, allowed);
  return reason ? `host ${host} is ${reason}; ${ONLY_GLOBAL}` : undefined;
}

/**
 * Why a webhook URL may not be registered: its host is a forbidden IP literal, does not resolve,
 * or ANY of the addresses it resolves to is forbidden (a client may connect to any of them).
 */
export async function targetRefusal(url: URL, policy: TargetPolicy): Promise<string | undefined> {
  const host = urlHost(url);
  if (isIP(host)) return literalTargetRefusal(url, policy.allowedNets);
  let addresses: LookupAddress[];
  try {
    addresses = await policy.resolve(host);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return `host ${host} does not resolve${typeof code === 'string' ? ` (${code})` : ''}`;
  }
  if (addresses.length === 0) return `host ${host} does not resolve`;
  const refusal = firstRefusal(addresses, policy.allowedNets);
  return refusal ? `host ${host} ${refusal}` : undefined;
}

type LookupCallback = (err: Error | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for node:http(s) requests: the addresses it hands back are the ones the socket
 * connects to, and it hands them back only when every one of them passes the policy, so the
 * address checked is the address connected to (no DNS-rebinding window between check and connect).
 */
export function guardedLookup(policy: TargetPolicy) {
  return (hostname: string, options: { all?: boolean; family?: number } | number, callback: LookupCallback) => {
    const opts = typeof options === 'number' ? { family: options } : (options ?? {});
    policy.resolve(hostname, opts.family ?? 0).then(
      (addresses) => {
        const refusal = firstRefusal(addresses, policy.allowedNets);
        if (refusal) return callback(new ForbiddenTargetError(`${hostname} ${refusal}`), []);
        if (opts.all) return callback(null, addresses);
        const [first] = addresses;
        if (!first) return callback(new Error(`${hostname} does not resolve`), []);
        callback(null, first.address, first.family);
      },
      (error: Error) => callback(error, []),
    );
  };
}
