import { lookup as dnsLookup } from 'node:dns';
import { promises as dns } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';

export const URL_SCHEME = 'Must be an https URL.';
export const URL_ADDRESS = 'Must not point to a loopback, private, link-local or metadata address.';
export const URL_UNRESOLVED = 'The host name does not resolve.';
export const URL_CREDENTIALS = 'Must not carry a user name or password.';

/** IPv4 ranges a webhook never reaches: "this network", private, CGNAT, loopback, link-local (metadata), reserved. */
const IPV4_REFUSED: [string, number][] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];

function ipv4ToNumber(address: string): number {
  return address.split('.').reduce((sum, part) => sum * 256 + Number(part), 0);
}

function refusedIpv4(address: string): boolean {
  const value = ipv4ToNumber(address);
  return IPV4_REFUSED.some(([base, bits]) => {
    const size = 2 ** (32 - bits);
    return Math.floor(value / size) === Math.floor(ipv4ToNumber(base) / size);
  });
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part included). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase().split('%')[0];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const value = ipv4ToNumber(dotted[1]);
    text = `${text.slice(0, -dotted[1].length)}${Math.floor(value / 65536).toString(16)}:${(value % 65536).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16)));
  const front = parse(head);
  if (tail === undefined) return front;
  const back = parse(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

function refusedIpv6(address: string): boolean {
  const g = ipv6Groups(address);
  const embeddedIpv4 = () => `${g[6] >> 8}.${g[6] & 255}.${g[7] >> 8}.${g[7] & 255}`;
  const zeros = (from: number, to: number) => g.slice(from, to).every((group) => group === 0);
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d): the IPv4 inside decides.
  if (zeros(0, 5) && g[5] === 0xffff) return refusedIpv4(embeddedIpv4());
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return refusedIpv4(embeddedIpv4());
  // IPv4-translated (::ffff:0:a.b.c.d, SIIT): the IPv4 inside decides too.
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return refusedIpv4(embeddedIpv4());
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return true; // local-use NAT64 64:ff9b:1::/48 (RFC 8215)
  if (g[0] === 0x2001 && g[1] === 0) return true; // Teredo 2001::/32: its IPv4 is obfuscated, not checkable
  if (zeros(0, 6)) return true; // ::, ::1 and the deprecated IPv4-compatible block
  if ((g[0] & 0xfe00) === 0xfc00) return true; // unique local fc00::/7 (AWS metadata fd00:ec2::254 included)
  if ((g[0] & 0xffc0) === 0xfe80) return true; // link-local fe80::/10
  if ((g[0] & 0xffc0) === 0xfec0) return true; // site-local fec0::/10 (deprecated)
  if ((g[0] & 0xff00) === 0xff00) return true; // multicast
  if (g[0] === 0x2001 && g[1] === 0x0db8) return true; // documentation
  if (g[0] === 0x2002) return refusedIpv4(`${g[1] >> 8}.${g[1] & 255}.${g[2] >> 8}.${g[2] & 255}`); // 6to4
  return false;
}

/** True for an address a webhook must never be sent to; anything that is not an IP address is refused too. */
export function isRefusedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return refusedIpv4(address);
  if (family === 6) return refusedIpv6(address);
  return true;
}

/** Every address a host name resolves to. */
export type Resolver = (hostname: string) => Promise<string[]>;

export const systemResolver: Resolver = async (hostname) =>
  (await dns.lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

export interface UrlPolicy {
  /** WEBHOOK_ALLOW_PRIVATE_URLS: http allowed, and no address rule. */
  allowPrivate: boolean;
  resolve?: Resolver;
}

/**
 * Why a webhook URL is refused, or null. Checked when the URL is set; the address actually connected to
 * is checked again at every delivery (`guardedLookup`), since DNS may answer differently then.
 */
export async function refusedUrlReason(raw: string, policy: UrlPolicy): Promise<string | null> {
  if (!URL.canParse(raw)) return 'Enter a valid URL.';
  const url = new URL(raw);
  const schemes = policy.allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) return URL_SCHEME;
  if (url.username || url.password) return URL_CREDENTIALS;
  if (policy.allowPrivate) return null;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return isRefusedAddress(host) ? URL_ADDRESS : null;
  let addresses: string[];
  try {
    addresses = await (policy.resolve ?? systemResolver)(host);
  } catch {
    return URL_UNRESOLVED;
  }
  if (addresses.length === 0) return URL_UNRESOLVED;
  // Any refused answer refuses the URL: a name that resolves to both is a rebinding attempt waiting to happen.
  return addresses.some(isRefusedAddress) ? URL_ADDRESS : null;
}

export class RefusedAddressError extends Error {
  constructor(address: string) {
    super(`Refused to connect to ${address}: ${URL_ADDRESS}`);
  }
}

/**
 * A `lookup` for the HTTP agent: resolves the host, refuses every refused address, and hands the
 * connection the address it checked (the Host header and TLS SNI stay the URL's host name).
 */
export function guardedLookup(resolve: Resolver = systemResolver): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const refused = addresses.find(isRefusedAddress);
        if (refused !== undefined || addresses.length === 0) {
          callback(new RefusedAddressError(refused ?? hostname), '', 0);
          return;
        }
        if (options.all) {
          callback(
            null,
            addresses.map((address) => ({ address, family: isIP(address) })),
          );
          return;
        }
        callback(null, addresses[0], isIP(addresses[0]));
      },
      (error: unknown) => callback(error as NodeJS.ErrnoException, '', 0),
    );
  };
}

/** The system's lookup, unguarded (WEBHOOK_ALLOW_PRIVATE_URLS). */
export const plainLookup: LookupFunction = dnsLookup;
