// Which addresses and URLs a user may point the service at, and the reason given when not.
import assert from 'node:assert/strict';
import { addressProblem, canonicalUrl, urlSyntaxProblem } from '../../lib/address-policy';

describe('address problems', () => {
  it('public unicast addresses pass', () => {
    for (const ip of ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946', '::ffff:93.184.216.34', '64:ff9b::5db8:d822']) assert.equal(addressProblem(ip), null, ip);
  });

  it('private, loopback, link-local and reserved addresses are refused with the reason', () => {
    assert.equal(addressProblem('127.0.0.1'), '127.0.0.1 is a loopback address');
    assert.equal(addressProblem('10.1.2.3'), '10.1.2.3 is a private address');
    assert.equal(addressProblem('169.254.169.254'), '169.254.169.254 is a link-local address');
    assert.equal(addressProblem('100.64.0.1'), '100.64.0.1 is a carrier-grade NAT address');
    assert.equal(addressProblem('0.0.0.0'), '0.0.0.0 is a unspecified address');
    assert.equal(addressProblem('fd00::1'), 'fd00::1 is a unique-local (private) address');
    assert.equal(addressProblem('192.88.99.1'), '192.88.99.1 is the 6to4 relay anycast range');
    assert.equal(addressProblem('not-an-ip'), 'not-an-ip is not an IP address');
  });

  it('IPv6 forms that embed a private IPv4 address are judged by it', () => {
    for (const ip of ['::ffff:127.0.0.1', '::ffff:a00:1', '64:ff9b::a00:1', '2002:a00:1::1', '::10.0.0.1']) assert.match(addressProblem(ip) ?? '', /embeds 10\.0\.0\.1|embeds 127\.0\.0\.1/, ip);
    assert.equal(addressProblem('64:ff9b:1::1'), '64:ff9b:1::1 is a local-use NAT64 address');
  });
});

describe('URL syntax problems', () => {
  it('only absolute http(s) URLs without credentials, spaces or backslashes', () => {
    assert.equal(urlSyntaxProblem('https://example.com/watch?v=1'), null);
    assert.equal(urlSyntaxProblem('ftp://example.com/a'), 'must use http or https, not ftp');
    assert.equal(urlSyntaxProblem('https://user:pw@example.com/'), 'must not contain a user name or password');
    assert.equal(urlSyntaxProblem('https://exa mple.com/'), 'must not contain spaces or control characters');
    assert.equal(urlSyntaxProblem('https:\\\\example.com'), 'must not contain a backslash');
    assert.equal(urlSyntaxProblem('/relative/path'), 'is not a valid absolute URL');
    assert.equal(urlSyntaxProblem(`https://${'a'.repeat(64)}.com/`), 'has a host name with an empty label or one longer than 63 characters');
  });

  it('canonical form: what the URL parser makes of it', () => {
    assert.equal(canonicalUrl('HTTPS://Example.COM:443/a/../b'), 'https://example.com/b');
  });
});
