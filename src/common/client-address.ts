/**
 * Fastify's `trustProxy` from TRUST_PROXY (validated at boot, where `true` is refused): `false`
 * (default: the socket's address is the client), a hop count, or a list of addresses/subnets/names
 * such as `loopback, 10.0.0.0/8`. Behind a Kubernetes ingress set it to the ingress's subnet, or every
 * client shares the proxy's address for the per-address limits.
 */
export function parseTrustProxy(value: string): false | number | string {
  const text = value.trim();
  if (text === '' || text === 'false') return false;
  if (text === 'true') throw new Error('TRUST_PROXY=true is refused: name the proxies or their number');
  if (/^\d+$/.test(text)) return Number(text);
  return text;
}

interface AddressedRequest {
  ip?: string;
  socket?: { remoteAddress?: string };
}

const CLIENT_ADDRESS = Symbol('client address');

/**
 * The client's address for per-address limits: Fastify's `request.ip` (which follows TRUST_PROXY),
 * IPv4-mapped IPv6 written as IPv4, and IPv6 cut to its /64, since one client commonly holds a whole
 * /64 and could otherwise take a fresh address for every request. Worked out once per request: Fastify
 * parses the forwarding headers again on each read of `ip`, and a refused request asks twice (the
 * refusal, its log line).
 */
export function clientAddress(request: AddressedRequest): string {
  const memo = request as AddressedRequest & { [CLIENT_ADDRESS]?: string };
  return (memo[CLIENT_ADDRESS] ??= addressOf(request));
}

function addressOf(request: AddressedRequest): string {
  const raw = (request.ip ?? request.socket?.remoteAddress ?? '').trim();
  if (raw === '') return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(raw);
  if (mapped) return mapped[1];
  if (!raw.includes(':')) return raw;
  return `${expandIpv6(raw).slice(0, 4).join(':')}::/64`;
}

function expandIpv6(address: string): string[] {
  const halves = address.split('%')[0].toLowerCase().split('::');
  const head = halves[0];
  const tail = halves.at(1); // none without a `::`
  const left = head ? head.split(':') : [];
  const right = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0');
  return [...left, ...zeros, ...right].map((group) => group.replace(/^0+(?=.)/, ''));
}
