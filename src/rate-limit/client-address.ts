/**
 * Fastify's `trustProxy` from TRUST_PROXY: `false` (default: the socket's address is the client),
 * `true`, a hop count, or a list of addresses/subnets/names such as `loopback, 10.0.0.0/8`. Behind a
 * Kubernetes ingress set it to the ingress's subnet, or every client shares the proxy's address for
 * the sign-in limits.
 */
export function parseTrustProxy(value: string): boolean | number | string {
  const text = value.trim();
  if (text === '' || text === 'false') return false;
  if (text === 'true') return true;
  if (/^\d+$/.test(text)) return Number(text);
  return text;
}
