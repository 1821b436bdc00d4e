/**
 * Where callbacks may be posted. A notification URL is the merchant's to choose, but it must not
 * make this service reach its own network (instance metadata at 169.254.169.254, loopback services,
 * private ranges, internal names): refused when it is set and again at delivery, after DNS
 * resolution, on the very address the connection then uses (see adapters/http/callback-transport.ts).
 */
import { isIP } from 'node:net';

export interface DestinationPolicy {
  /** Loopback addresses (the local runner's own receiver); never on AWS. */
  readonly allowLoopback: boolean;
  /** Only https:// (AWS stages). */
  readonly httpsOnly: boolean;
}

export const DEFAULT_DESTINATION_POLICY: DestinationPolicy = { allowLoopback: false, httpsOnly: false };

const ipv4Number = (ip: string): number => ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);
const inV4 = (ip: string, base: string, bits: number): boolean => {
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return ((ipv4Number(ip) & mask) >>> 0) === ((ipv4Number(base) & mask) >>> 0);
};

/** IPv4 ranges that are not the public internet (RFC 6890 and friends), loopback listed apart. */
const V4_LOOPBACK: readonly [string, number][] = [['127.0.0.0', 8]];
const V4_NOT_PUBLIC: readonly [string, number][] = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.0.0.0', 24],
  ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4],
];

/** The 8 groups of an IPv6 address as numbers (expands `::` and an embedded IPv4 tail). */
function ipv6Groups(ip: string): number[] {
  let text = ip.toLowerCase().replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)?.[1];
  if (v4) {
    const n = ipv4Number(v4);
    text = text.slice(0, -v4.length) + `${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const fill = tail !== undefined ? Array(8 - h.length - t.length).fill('0') : [];
  return [...h, ...fill, ...t].map((g) => parseInt(g || '0', 16));
}

export type AddressKind = 'public' | 'loopback' | 'not-public';

/** What an IP address is, for the purpose of posting callbacks to it. */
export function addressKind(ip: string): AddressKind {
  const family = isIP(ip.replace(/^\[|\]$/g, ''));
  if (family === 4) {
    if (V4_LOOPBACK.some(([b, n]) => inV4(ip, b, n))) return 'loopback';
    return V4_NOT_PUBLIC.some(([b, n]) => inV4(ip, b, n)) ? 'not-public' : 'public';
  }
  if (family !== 6) return 'not-public';
  const g = ipv6Groups(ip);
  if (g.every((x, i) => (i < 7 ? x === 0 : x === 1))) return 'loopback';
  if (g.every((x) => x === 0)) return 'not-public';
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible forms are judged as the IPv4 address.
  if (g.slice(0, 5).every((x) => x === 0) && (g[5] === 0xffff || g[5] === 0)) {
    const v4 = [g[6]! >> 8, g[6]! & 0xff, g[7]! >> 8, g[7]! & 0xff].join('.');
    return addressKind(v4);
  }
  const first = g[0]!;
  // Forms that carry an IPv4 address a relay or translator would reach for us: judged as that address
  // (its loopback too is not ours to reach, so anything short of public is refused).
  const embedded = (hi: number, lo: number) => (addressKind([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join('.')) === 'public' ? 'public' : 'not-public');
  if (first === 0x2002) return embedded(g[1]!, g[2]!); // 6to4 2002:AABB:CCDD::/48
  if (first === 0x0064 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return embedded(g[6]!, g[7]!); // NAT64 64:ff9b::/96
  if (first === 0x0064 && g[1] === 0xff9b) return 'not-public'; // local-use NAT64 64:ff9b:1::/48 (RFC 8215) and the rest of 64:ff9b::/32
  if (first === 0x2001 && g[1] === 0x0000) return 'not-public'; // Teredo 2001::/32: the server and client addresses inside are not what we would reach
  if ((first & 0xfe00) === 0xfc00) return 'not-public'; // unique local fc00::/7
  if ((first & 0xffc0) === 0xfe80) return 'not-public'; // link-local fe80::/10
  if ((first & 0xff00) === 0xff00) return 'not-public'; // multicast
  if (first === 0x2001 && g[1] === 0x0db8) return 'not-public'; // documentation
  return 'public';
}

/** Whether a resolved address may receive callbacks under the policy. */
export const addressAllowed = (ip: string, policy: DestinationPolicy): boolean => {
  const kind = addressKind(ip);
  return kind === 'public' || (kind === 'loopback' && policy.allowLoopback);
};

const INTERNAL_SUFFIXES = ['.localhost', '.local', '.internal', '.intranet', '.lan', '.home.arpa', '.corp'];

/**
 * Why a notification URL is refused, or undefined when it may be used (before DNS: names are
 * resolved and checked again at delivery). WHATWG URL parsing normalises the tricks (`0x7f000001`,
 * `127.1`, `2130706433`) to dotted IPv4 first.
 */
export function notificationUrlProblem(value: string, policy: DestinationPolicy = DEFAULT_DESTINATION_POLICY): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'it is not a URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'it must be an http(s) URL';
  if (policy.httpsOnly && url.protocol !== 'https:') return 'it must be an https URL';
  if (url.username || url.password) return 'it must not carry credentials';
  const host = url.hostname.toLowerCase();
  const ip = host.replace(/^\[|\]$/g, '');
  // `localhost.` or `shop.example..` name what their dotless form names to a resolver, but slip past
  // the suffix checks below: a name with an empty label (a trailing, leading or doubled dot) is refused.
  if (!isIP(ip) && host.split('.').some((label) => label === '')) return 'it must be a public host name (no empty labels or trailing dots)';
  if (isIP(ip)) return addressAllowed(ip, policy) ? undefined : 'it points to a private, loopback or reserved address';
  if (host === 'localhost') return policy.allowLoopback ? undefined : 'it points to this machine (localhost)';
  if (!host.includes('.') || INTERNAL_SUFFIXES.some((s) => host.endsWith(s))) return 'it must be a public host name';
  return undefined;
}
