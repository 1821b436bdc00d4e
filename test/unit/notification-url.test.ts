import { addressAllowed, addressKind, notificationUrlProblem } from '../../lambdas/domain/notification-url';

/**
 * Addresses that carry an IPv4 address inside an IPv6 one (6to4, NAT64, Teredo) and host names with
 * empty labels: each spelling is judged as what a relay, translator or resolver would reach.
 */
describe('addresses with an IPv4 address inside', () => {
  it.each([
    ['2002:7f00:1::1', 'not-public', '6to4 of 127.0.0.1'],
    ['2002:a9fe:a9fe::1', 'not-public', '6to4 of the metadata service'],
    ['2002:0a00:0005::', 'not-public', '6to4 of 10.0.0.5'],
    ['2002:c0a8:0101::1', 'not-public', '6to4 of 192.168.1.1'],
    ['2002:0808:0808::1', 'public', '6to4 of 8.8.8.8'],
    ['64:ff9b::7f00:1', 'not-public', 'NAT64 of 127.0.0.1'],
    ['64:ff9b::169.254.169.254', 'not-public', 'NAT64 of the metadata service, dotted'],
    ['64:ff9b::a00:5', 'not-public', 'NAT64 of 10.0.0.5'],
    ['64:ff9b::808:808', 'public', 'NAT64 of 8.8.8.8'],
    ['64:ff9b:1::808:808', 'not-public', 'local-use NAT64 (64:ff9b:1::/48)'],
    ['64:ff9b:1:ffff::1', 'not-public', 'local-use NAT64, any address'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'not-public', 'Teredo'],
    ['2001::1', 'not-public', 'Teredo, short'],
    ['2001:db8::1', 'not-public', 'documentation'],
    ['2001:4860:4860::8888', 'public', 'an ordinary public address under 2001::/16'],
  ])('%s is %s (%s)', (ip, kind) => {
    expect(addressKind(ip)).toBe(kind);
    // The delivery-time check after DNS resolution is this same judgement, loopback allowed or not.
    expect(addressAllowed(ip, { allowLoopback: true, httpsOnly: false })).toBe(kind === 'public');
  });
});

describe('notification URLs', () => {
  const refused = /private, loopback or reserved|public host name/;
  it.each([
    'http://[2002:7f00:1::1]/',
    'https://[2002:7f00:1::1]:8443/cb',
    'http://[64:ff9b::7f00:1]/',
    'http://[64:ff9b:1::a00:1]/',
    'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/',
    'https://shop.example../cb',
    'https://shop.example./cb',
    'https://localhost./cb',
    'https://localhost../cb',
    'https://printer.local./cb',
    'https://shop..example/cb',
  ])('%s is refused, loopback allowed or not', (url) => {
    expect(notificationUrlProblem(url, { allowLoopback: true, httpsOnly: false })).toMatch(refused);
    expect(notificationUrlProblem(url, { allowLoopback: false, httpsOnly: false })).toMatch(refused);
  });

  it.each(['https://shop.example/cb', 'https://[2002:808:808::1]/cb', 'https://[64:ff9b::808:808]/cb', 'https://[2606:4700::1111]/'])('%s is accepted', (url) => {
    expect(notificationUrlProblem(url)).toBeUndefined();
  });
});
