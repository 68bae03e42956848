import { AppError } from '@crm/http';
import { clientAddress } from '@crm/runtime';

export interface TransportPolicy {
  requireHttps: boolean;
  trustedProxies: Set<string>;
}

/** Parses TRUSTED_PROXIES (comma-separated addresses); HTTPS is required by default only in production. */
export function transportPolicy(config: { REQUIRE_HTTPS?: boolean; NODE_ENV: string; TRUSTED_PROXIES: string }): TransportPolicy {
  const trustedProxies = new Set(
    config.TRUSTED_PROXIES.split(',')
      .map((s) => normaliseAddress(s.trim()))
      .filter(Boolean),
  );
  return { requireHttps: config.REQUIRE_HTTPS ?? config.NODE_ENV === 'production', trustedProxies };
}

/** `::ffff:1.2.3.4` → `1.2.3.4`, so IPv4 peers match however the socket reports them. */
function normaliseAddress(address: string): string {
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

function peerOf(request: Request): string | undefined {
  const peer = clientAddress(request);
  return peer === undefined ? undefined : normaliseAddress(peer);
}

/**
 * The client's address: the TCP peer, or — when the peer is a trusted proxy — the nearest
 * untrusted address in its X-Forwarded-For chain.
 */
export function clientIpOf(request: Request, policy: TransportPolicy): string | undefined {
  const peer = peerOf(request);
  if (peer === undefined || !policy.trustedProxies.has(peer)) return peer;
  const chain = (request.headers.get('x-forwarded-for') ?? '')
    .split(',')
    .map((s) => normaliseAddress(s.trim()))
    .filter(Boolean);
  for (let i = chain.length - 1; i >= 0; i--) if (!policy.trustedProxies.has(chain[i] as string)) return chain[i];
  return chain[0] ?? peer;
}

/**
 * Contract §10: with REQUIRE_HTTPS, a request must have arrived over TLS, or through a
 * trusted proxy that says `X-Forwarded-Proto: https`; otherwise 403 https_required.
 */
export function assertHttps(request: Request, policy: TransportPolicy): void {
  if (!policy.requireHttps || request.url.startsWith('https:')) return;
  const peer = peerOf(request);
  const forwardedProto = request.headers.get('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase();
  if (peer !== undefined && policy.trustedProxies.has(peer) && forwardedProto === 'https') return;
  throw new AppError('https_required', 'This API is only served over HTTPS');
}
