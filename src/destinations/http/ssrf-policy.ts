import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { withTimeout } from '../../common/with-timeout';

// The SSRF (server-side request forgery) guard of docs/api.md#webhooks: subscription URLs must not make this
// service call loopback, private, link-local or cloud-metadata addresses, at creation and again
// before every delivery attempt (DNS may change in between: rebinding).

/** Why a subscription or delivery URL is refused; the message is safe to show the client. */
export class UrlPolicyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UrlPolicyError';
  }
}

export type Resolver = (hostname: string) => Promise<string[]>;

const DNS_TIMEOUT_MS = 3000;

// A slow resolver must not hold a request (or a delivery slot) open indefinitely.
const systemResolver: Resolver = async (hostname) => {
  const found = await withTimeout(
    lookup(hostname, { all: true, verbatim: true }),
    DNS_TIMEOUT_MS,
    'DNS lookup timed out',
  );
  return found.map((a) => a.address);
};

const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96') as [ipaddr.IPv6, number];

/**
 * True only for globally routable unicast addresses. Everything ipaddr.js classifies otherwise
 * is refused: loopback, private (RFC 1918), unique local (RFC 4193), link-local (which holds
 * the 169.254.169.254 metadata address), CGNAT, multicast, unspecified, broadcast, reserved,
 * and the IPv6 forms that embed an IPv4 address (6to4, Teredo, NAT64, IPv4-compatible) except
 * mapped ones (::ffff:0:0/96) whose embedded address is itself public.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    // IPv4-compatible addresses (::/96, deprecated by RFC 4291): ipaddr.js calls them unicast,
    // yet ::7f00:1 and ::a9fe:a9fe may reach 127.0.0.1 or the metadata address on a host that
    // still routes them. Nothing legitimate uses them, so the whole range is refused.
    if (v6.match(IPV4_COMPATIBLE)) return false;
    if (v6.isIPv4MappedAddress()) parsed = v6.toIPv4Address();
  }
  return parsed.range() === 'unicast';
}

/**
 * Checks a subscription URL: http(s), no embedded credentials, and a host that is (or resolves
 * only to) public addresses unless `allowPrivate`. Returns the addresses it resolved to.
 * The dispatcher repeats this before each attempt, because DNS may have changed since.
 */
export async function checkWebhookUrl(
  raw: string,
  options: { allowPrivate: boolean; resolve?: Resolver },
): Promise<string[]> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UrlPolicyError('url must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UrlPolicyError('url must use http or https');
  }
  if (url.username || url.password) {
    throw new UrlPolicyError('url must not contain credentials');
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[];
  if (isIP(host)) {
    addresses = [host];
  } else {
    try {
      addresses = await (options.resolve ?? systemResolver)(host);
    } catch {
      throw new UrlPolicyError(`url host ${host} does not resolve`);
    }
    if (addresses.length === 0) throw new UrlPolicyError(`url host ${host} does not resolve`);
  }
  if (!options.allowPrivate) {
    const blocked = addresses.find((a) => !isPublicAddress(a));
    if (blocked !== undefined) {
      throw new UrlPolicyError(
        `url host ${host} resolves to ${blocked}, a private or special-purpose address; such ` +
          'URLs are refused unless the service runs with WEBHOOK_ALLOW_PRIVATE_URLS=true ' +
          '(meant for local development)',
      );
    }
  }
  return addresses;
}
