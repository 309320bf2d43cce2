// Where webhooks may go (server-side request forgery): an endpoint is https unless the operator
// allows http, carries no credentials, and never reaches a loopback, private, link-local,
// carrier-grade NAT, multicast or cloud metadata address unless the operator allows private
// addresses. A literal address or `localhost` is refused when the endpoint is created; a name
// is checked each time it is resolved, just before connecting (http-sender.ts), so a name that
// later points inside is refused too.
import { BlockList, isIP } from 'node:net';

export interface UrlPolicy {
  allowHttp: boolean;
  allowPrivate: boolean;
}

export class RefusedUrlError extends Error {}

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, and the cloud metadata service 169.254.169.254
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and broadcast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128],
  ['fc00::', 7], // unique local (fd00:ec2::254, a metadata service, among them)
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/** The IPv4 address an IPv6 address carries (mapped ::ffff:a.b.c.d, or NAT64 64:ff9b::/96). */
function embeddedIpv4(address: string): string | undefined {
  const match =
    /^(?:::ffff:|64:ff9b::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(
      address,
    );
  if (!match) return undefined;
  if (match[1]) return match[1];
  const high = parseInt(match[2]!, 16);
  const low = parseInt(match[3]!, 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/** Whether an IP address is one a webhook must not reach (without WEBHOOK_ALLOW_PRIVATE). */
export function isInternalAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) {
    const v4 = embeddedIpv4(address.toLowerCase());
    if (v4 !== undefined) return blocked.check(v4, 'ipv4');
    return blocked.check(address, 'ipv6');
  }
  return true; // not an address at all: refuse rather than guess
}

/** The URL's host as an address or a name, without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/**
 * Checks an endpoint URL as given (no DNS): returns the normalized URL, or throws
 * RefusedUrlError saying why.
 */
export function checkEndpointUrl(raw: string, policy: UrlPolicy): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new RefusedUrlError('url is not a valid absolute URL');
  }
  if (url.protocol !== 'https:' && !(policy.allowHttp && url.protocol === 'http:')) {
    throw new RefusedUrlError(
      policy.allowHttp ? 'url must use https or http' : 'url must use https',
    );
  }
  if (url.username || url.password) throw new RefusedUrlError('url must not carry credentials');
  if (url.hash) throw new RefusedUrlError('url must not have a #fragment');
  if (!policy.allowPrivate) {
    const host = hostOf(url).toLowerCase();
    if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.internal')) {
      throw new RefusedUrlError(`url points to a local host (${host})`);
    }
    if (isIP(host) && isInternalAddress(host)) {
      throw new RefusedUrlError(`url points to an internal address (${host})`);
    }
  }
  return url.toString();
}
