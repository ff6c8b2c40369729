import { isIPv6 } from 'node:net';
import { finding, matchesOf, type PiiFinding } from '../types.ts';

const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
// A dotted quad not inside a longer dotted run (10.0.19045.2965) nor glued to a word (v1.2.3.4, Chrome/124.0.0.0).
const IPV4 = new RegExp(`(?<![\\w.]|\\d\\.|[A-Za-z]/)${OCTET}(?:\\.${OCTET}){3}(?![\\w]|\\.\\d)`, 'g');
const IPV6_CANDIDATE = /(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:(?:\d{1,3}\.){3}\d{1,3}|[0-9A-Fa-f]{0,4})(?![\w:])/g;

/** Whether an IPv6 candidate is meant as an address: valid, and not a bare `::x` or letters-only token. */
function isIpv6Address(candidate: string): boolean {
  if (!isIPv6(candidate)) return false;
  const groups = candidate.split(':').filter((group) => group !== '');
  return groups.length >= 2 && /\d/.test(candidate);
}

/** IPv4 addresses with valid octets (no leading zeros) and IPv6 addresses in any valid notation. */
export function detectIpAddresses(text: string): PiiFinding[] {
  const found: PiiFinding[] = [];
  for (const match of matchesOf(IPV4, text)) found.push(finding('ip_address', text, match.index, match.index + match[0].length));
  for (const match of matchesOf(IPV6_CANDIDATE, text)) {
    if (isIpv6Address(match[0])) found.push(finding('ip_address', text, match.index, match.index + match[0].length));
  }
  return found;
}
