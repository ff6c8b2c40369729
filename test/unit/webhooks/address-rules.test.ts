/** Which addresses a webhook may reach, and which URLs registration takes. */
import { describe, expect, it } from 'vitest';
import { isPublicAddress } from '../../../src/domain/webhooks/address-rules.ts';
import { checkWebhookUrl, type ResolveHost } from '../../../src/domain/webhooks/webhook-url.ts';
import { GatewayError } from '../../../src/errors/gateway-error.ts';
import { parseRetryDelays, webhookBackoff } from '../../../src/infra/webhooks/webhook-queue.ts';

const NOT_PUBLIC = [
  // IPv4
  ['0.0.0.0', 'unspecified'],
  ['10.1.2.3', 'private'],
  ['100.64.0.1', 'carrier-grade NAT'],
  ['100.127.255.254', 'carrier-grade NAT, top'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback, top'],
  ['169.254.169.254', 'link-local (metadata)'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private, top'],
  ['192.168.1.1', 'private'],
  ['192.0.0.8', 'IETF assignments'],
  ['192.0.2.10', 'documentation'],
  ['198.18.0.1', 'benchmarking'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['255.255.255.255', 'broadcast'],
  // IPv6
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback, written out'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local with a zone'],
  ['fc00::1', 'unique local'],
  ['fd12:3456:789a::1', 'unique local'],
  ['ff02::1', 'multicast'],
  ['2001:db8::1', 'documentation'],
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
  ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
  ['::ffff:10.0.0.1', 'IPv4-mapped private'],
  ['::ffff:169.254.169.254', 'IPv4-mapped link-local'],
  ['::127.0.0.1', 'IPv4-compatible loopback'],
  ['64:ff9b::10.0.0.1', 'NAT64 of a private address'],
  ['2002:7f00:1::1', '6to4 of loopback'],
  ['2002:c0a8:101::1', '6to4 of a private address'],
  // Not addresses at all
  ['localhost', 'a name'],
  ['', 'nothing'],
  ['1.2.3', 'a short dotted quad'],
] as const;

const PUBLIC = [
  ['1.1.1.1', 'public'],
  ['8.8.8.8', 'public'],
  ['93.184.215.14', 'public'],
  ['100.63.255.255', 'just below carrier-grade NAT'],
  ['100.128.0.0', 'just above carrier-grade NAT'],
  ['172.15.255.255', 'just below 172.16/12'],
  ['172.32.0.0', 'just above 172.16/12'],
  ['223.255.255.255', 'just below multicast'],
  ['2606:4700:4700::1111', 'public IPv6'],
  ['2001:4860:4860::8888', 'public IPv6 in 2001::/16, not Teredo'],
  ['::ffff:8.8.8.8', 'IPv4-mapped public'],
  ['64:ff9b::808:808', 'NAT64 of a public address'],
  ['2002:808:808::1', '6to4 of a public address'],
] as const;

describe('isPublicAddress', () => {
  it.each(NOT_PUBLIC)('%s (%s) is not public', (address) => expect(isPublicAddress(address)).toBe(false));
  it.each(PUBLIC)('%s (%s) is public', (address) => expect(isPublicAddress(address)).toBe(true));
});

const resolvesTo =
  (table: Record<string, string[]>): ResolveHost =>
  async (hostname) => {
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses;
  };

const DNS = resolvesTo({
  'hooks.example.com': ['93.184.215.14', '2606:4700:4700::1111'],
  'internal.example.com': ['10.0.0.7'],
  'mixed.example.com': ['93.184.215.14', '127.0.0.1'],
  'mapped.example.com': ['::ffff:192.168.0.1'],
});

async function refusal(url: string, allowPrivate = false): Promise<GatewayError> {
  try {
    await checkWebhookUrl(url, { allowPrivate, resolve: DNS });
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error(`${url} was accepted`);
}

describe('checkWebhookUrl', () => {
  it('accepts an https URL whose host resolves to public addresses only, normalised', async () => {
    await expect(checkWebhookUrl('https://HOOKS.example.com/in?x=1', { allowPrivate: false, resolve: DNS })).resolves.toBe('https://hooks.example.com/in?x=1');
    await expect(checkWebhookUrl('https://8.8.8.8/hook', { allowPrivate: false, resolve: DNS })).resolves.toBe('https://8.8.8.8/hook');
  });

  it.each([
    ['not a url', /absolute URL/],
    ['/relative/path', /absolute URL/],
    ['http://hooks.example.com/in', /https URL/],
    ['ftp://hooks.example.com/in', /https URL/],
    ['https://user:pass@hooks.example.com/in', /credentials/],
    ['https://internal.example.com/in', /10\.0\.0\.7/],
    ['https://mixed.example.com/in', /127\.0\.0\.1/],
    ['https://mapped.example.com/in', /public addresses only/],
    ['https://127.0.0.1/in', /public addresses only/],
    ['https://[::1]/in', /public addresses only/],
    ['https://[::ffff:10.0.0.1]/in', /public addresses only/],
    ['https://169.254.169.254/latest/meta-data', /public addresses only/],
    ['https://nowhere.example.com/in', /does not resolve/],
  ])('refuses %s with a 400 naming url', async (url, message) => {
    const error = await refusal(url);
    expect(error).toMatchObject({ status: 400, code: 'invalid_value', param: 'url' });
    expect(error.message).toMatch(message);
  });

  it('with private URLs allowed, takes http and loopback, and still refuses other schemes', async () => {
    const rules = { allowPrivate: true, resolve: DNS };
    await expect(checkWebhookUrl('http://127.0.0.1:8080/hook', rules)).resolves.toBe('http://127.0.0.1:8080/hook');
    await expect(checkWebhookUrl('https://internal.example.com/in', rules)).resolves.toBe('https://internal.example.com/in');
    expect((await refusal('ftp://127.0.0.1/x', true)).message).toMatch(/http or https/);
  });
});

describe('the retry schedule', () => {
  it('reads WEBHOOK_RETRY_DELAYS_MS and gives each failed attempt its delay, then -1 (no more)', () => {
    const delays = parseRetryDelays('200,5000,60000');
    expect(delays).toEqual([200, 5000, 60000]);
    const backoff = webhookBackoff(delays);
    expect([1, 2, 3, 4].map((attempt) => backoff(attempt))).toEqual([200, 5000, 60000, -1]);
  });
});
