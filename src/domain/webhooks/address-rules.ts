/**
 * Which addresses a webhook may reach: public unicast only, so that a tenant cannot make the
 * gateway call its own network (SSRF). Ranges from the IANA special-purpose registries (RFC 6890
 * and its updates); an IPv6 address that embeds an IPv4 one (mapped, compatible, NAT64, 6to4) is
 * judged by the IPv4 address it carries.
 */
import { isIPv4, isIPv6 } from 'node:net';

type Cidr = readonly [base: string, bits: number];

const NOT_PUBLIC_V4: readonly Cidr[] = [
  ['0.0.0.0', 8], // "this network", the unspecified address among them
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata services live here)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
];

const NOT_PUBLIC_V6: readonly Cidr[] = [
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard-only
  ['2001::', 32], // Teredo
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

/** The four bytes of a dotted quad (validated by isIPv4). */
function v4Bytes(address: string): number[] {
  return address.split('.').map(Number);
}

/** The sixteen bytes of an IPv6 address (validated by isIPv6), a zone (`%eth0`) ignored. */
function v6Bytes(address: string): number[] {
  let text = address.split('%')[0] as string;
  let tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.', lastColon)) {
    tail = v4Bytes(text.slice(lastColon + 1));
    text = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const [head = '', rest] = text.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const front = groups(head);
  const back = rest === undefined ? [] : groups(rest);
  const words = [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
  const bytes = words.flatMap((word) => [word >> 8, word & 0xff]);
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes;
}

function inCidr(bytes: readonly number[], [base, bits]: Cidr, parse: (text: string) => number[]): boolean {
  const prefix = parse(base);
  for (let bit = 0; bit < bits; bit++) {
    const mask = 0x80 >> (bit % 8);
    if (((bytes[bit >> 3] as number) & mask) !== ((prefix[bit >> 3] as number) & mask)) return false;
  }
  return true;
}

function isPublicV4(bytes: readonly number[]): boolean {
  return !NOT_PUBLIC_V4.some((cidr) => inCidr(bytes, cidr, v4Bytes));
}

/** The IPv4 address an IPv6 one carries: mapped (::ffff:0:0/96), compatible (::/96, :: and ::1 included), NAT64 (64:ff9b::/96), 6to4 (2002::/16). */
function embeddedV4(bytes: readonly number[]): number[] | null {
  const zeros = (from: number, to: number) => bytes.slice(from, to).every((byte) => byte === 0);
  if (zeros(0, 10) && ((bytes[10] === 0xff && bytes[11] === 0xff) || zeros(10, 12))) return bytes.slice(12);
  if (inCidr(bytes, ['64:ff9b::', 96], v6Bytes)) return bytes.slice(12);
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return bytes.slice(2, 6);
  return null;
}

/** True for a public unicast IPv4 or IPv6 address; false for any other address, and for text that is not one. */
export function isPublicAddress(address: string): boolean {
  if (isIPv4(address)) return isPublicV4(v4Bytes(address));
  if (!isIPv6(address)) return false;
  const bytes = v6Bytes(address);
  const v4 = embeddedV4(bytes);
  if (v4) return isPublicV4(v4);
  return !NOT_PUBLIC_V6.some((cidr) => inCidr(bytes, cidr, v6Bytes));
}
