import { clientAddress, parseTrustProxy } from '../../src/common/client-address.js';

describe('the client address the per-address limits count', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:127.0.0.1', '127.0.0.1'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::99', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:aaaa::1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
  ])('counts %s as %s', (ip, expected) => {
    expect(clientAddress({ ip })).toBe(expected);
  });

  it('falls back to the socket address, then to one shared bucket', () => {
    expect(clientAddress({ socket: { remoteAddress: '198.51.100.4' } })).toBe('198.51.100.4');
    expect(clientAddress({})).toBe('unknown');
  });

  it('reads TRUST_PROXY as Express does, except `true` (refused at boot)', () => {
    expect(parseTrustProxy('false')).toBe(false);
    expect(() => parseTrustProxy('true')).toThrow(/TRUST_PROXY=true is refused/);
    expect(parseTrustProxy('2')).toBe(2);
    expect(parseTrustProxy('loopback, 10.0.0.0/8')).toBe('loopback, 10.0.0.0/8');
  });
});
