import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebhookSender } from '../../src/webhooks/webhook-sender.js';
import {
  isRefusedAddress,
  refusedUrlReason,
  type Resolver,
  URL_ADDRESS,
  URL_SCHEME,
} from '../../src/webhooks/webhook-url.js';
import { RETRY_SCHEDULE_MS, retryDelayMs } from '../../src/webhooks/webhook-events.js';

const resolvesTo =
  (...addresses: string[]): Resolver =>
  () =>
    Promise.resolve(addresses);
const strict = (resolve: Resolver) => ({ allowPrivate: false, resolve });

describe('webhook URL rules', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local / cloud metadata'],
    ['100.64.0.1', 'CGNAT'],
    ['100.100.100.200', 'CGNAT (Alibaba metadata)'],
    ['0.0.0.0', 'this network'],
    ['::1', 'IPv6 loopback'],
    ['::', 'IPv6 unspecified'],
    ['fe80::1', 'IPv6 link-local'],
    ['fc00::1', 'IPv6 unique local'],
    ['fd00:ec2::254', 'AWS IPv6 metadata'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback, hex form'],
    ['::ffff:169.254.169.254', 'IPv4-mapped metadata'],
    ['64:ff9b::10.0.0.1', 'NAT64 of a private address'],
    ['64:ff9b:1::a9fe:a9fe', 'local-use NAT64 (RFC 8215), whatever it embeds'],
    ['::ffff:0:7f00:1', 'IPv4-translated loopback (SIIT)'],
    ['::ffff:0:a9fe:a9fe', 'IPv4-translated metadata (SIIT)'],
    ['2001::a9fe:a9fe', 'Teredo, whose embedded address is obfuscated'],
  ])('refuses %s (%s)', (address) => {
    expect(isRefusedAddress(address)).toBe(true);
  });

  it.each(['93.184.215.14', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])(
    'allows the public address %s',
    (address) => {
      expect(isRefusedAddress(address)).toBe(false);
    },
  );

  it('allows only https', async () => {
    const publicHost = resolvesTo('93.184.215.14');
    expect(await refusedUrlReason('http://hooks.example.com/in', strict(publicHost))).toBe(URL_SCHEME);
    expect(await refusedUrlReason('ftp://hooks.example.com/in', strict(publicHost))).toBe(URL_SCHEME);
    expect(await refusedUrlReason('https://hooks.example.com/in', strict(publicHost))).toBeNull();
  });

  it('refuses a host name that resolves to 127.0.0.1', async () => {
    expect(await refusedUrlReason('https://rebind.example.com/', strict(resolvesTo('127.0.0.1')))).toBe(URL_ADDRESS);
  });

  it('refuses a host name with any refused answer among public ones', async () => {
    expect(await refusedUrlReason('https://mixed.example.com/', strict(resolvesTo('93.184.215.14', '10.0.0.5')))).toBe(
      URL_ADDRESS,
    );
  });

  it('refuses literal private, metadata and IPv4-mapped addresses', async () => {
    const never: Resolver = () => Promise.reject(new Error('not resolved'));
    for (const url of [
      'https://10.0.0.1/',
      'https://169.254.169.254/latest/meta-data/',
      'https://[::1]/',
      'https://[::ffff:127.0.0.1]/',
      'https://[fd00:ec2::254]/',
    ])
      expect(await refusedUrlReason(url, strict(never))).toBe(URL_ADDRESS);
  });

  it('refuses localhost with the system resolver', async () => {
    expect(await refusedUrlReason('https://localhost/hook', { allowPrivate: false })).toBe(URL_ADDRESS);
  });

  it('WEBHOOK_ALLOW_PRIVATE_URLS lifts the rules: http and loopback allowed', async () => {
    expect(await refusedUrlReason('http://127.0.0.1:9/hook', { allowPrivate: true })).toBeNull();
  });

  it('checks again the address actually connected to (DNS rebinding): no request leaves', async () => {
    let reached = 0;
    const server = http.createServer((_request, response) => {
      reached++;
      response.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    // The name passed the check when it was set; now it resolves to loopback.
    const sender = new WebhookSender({ timeoutMs: 2000, allowPrivate: false, resolve: resolvesTo('127.0.0.1') });
    try {
      const result = await sender.send(`https://rebound.example.com:${port}/`, {}, '{}');
      expect(result.status).toBeNull();
      expect(result.error).toContain(URL_ADDRESS);
      const literal = await sender.send(`https://127.0.0.1:${port}/`, {}, '{}');
      expect(literal.error).toContain(URL_ADDRESS);
      const plain = await sender.send(`http://hooks.example.com:${port}/`, {}, '{}');
      expect(plain.error).toBe('Only https URLs are allowed.');
      expect(reached).toBe(0);
    } finally {
      sender.close();
      server.close();
    }
  });

  it("follows the contract's retry schedule, then gives up", () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((attempt) => retryDelayMs(attempt))).toEqual([
      5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
    ]);
    expect(retryDelayMs(RETRY_SCHEDULE_MS.length + 1)).toBeNull();
  });
});
