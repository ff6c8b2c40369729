/**
 * The HTTP agent of webhook deliveries: it connects only to public addresses (unless private URLs
 * are allowed), judged on the addresses DNS gave and again on the socket's peer, so that a name
 * that resolved to a public address at registration and to a private one now is refused.
 */
import { lookup, promises as dns, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { isPublicAddress } from '../../domain/webhooks/address-rules.ts';
import type { ResolveHost } from '../../domain/webhooks/webhook-url.ts';

/** A connection refused because the address it would reach is not public. */
export class BlockedAddressError extends Error {
  readonly code = 'WEBHOOK_ADDRESS_BLOCKED';
  constructor(host: string, address: string) {
    super(`'${host}' resolves to ${address}, which is not a public address`);
    this.name = 'BlockedAddressError';
  }
}

/** Every address of a host name, for the check at registration. */
export const resolveHost: ResolveHost = async (hostname) => (await dns.lookup(hostname, { all: true, order: 'verbatim' })).map((entry) => entry.address);

/** dns.lookup that leaves out addresses that are not public, and fails when none is left (net.connect asks for one address or, with autoSelectFamily, all). */
export function publicOnlyLookup(): LookupFunction {
  return (
    hostname: string,
    options: LookupOptions,
    callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const allowed = addresses.filter((entry) => isPublicAddress(entry.address));
      const first = allowed[0];
      if (!first) return callback(new BlockedAddressError(hostname, addresses[0]?.address ?? 'no address'), []);
      if (options.all === true) return callback(null, allowed);
      return callback(null, first.address, first.family);
    });
  };
}

/** Refuses an IP literal that is not public (net.connect does not look literals up), and a socket whose peer is not public. */
function guardedConnector(connectTimeoutMs: number): buildConnector.connector {
  const connect = buildConnector({ lookup: publicOnlyLookup(), timeout: connectTimeoutMs });
  return (options, callback) => {
    if (isIP(options.hostname) !== 0 && !isPublicAddress(options.hostname)) return callback(new BlockedAddressError(options.hostname, options.hostname), null);
    connect(options, (...args) => {
      const [error, socket] = args;
      if (error) return callback(error, null);
      const peer = socket.remoteAddress;
      if (peer !== undefined && isPublicAddress(peer)) return callback(null, socket);
      socket.destroy();
      callback(new BlockedAddressError(options.hostname, peer ?? 'an unknown address'), null);
    });
  };
}

/** The agent deliveries go through; `allowPrivate` (WEBHOOK_ALLOW_PRIVATE_URLS) lifts the address guard. */
export function createWebhookAgent(options: { allowPrivate: boolean; timeoutMs: number; connections?: number }): Agent {
  return new Agent({
    connect: options.allowPrivate ? { timeout: options.timeoutMs } : guardedConnector(options.timeoutMs),
    // The sender's own deadline (the same time, over the whole attempt) ends it first; these only back it up.
    headersTimeout: options.timeoutMs + 1_000,
    bodyTimeout: options.timeoutMs + 1_000,
    connections: options.connections ?? 16,
    // An endpoint answers seldom enough that a kept socket is mostly a stale one.
    keepAliveTimeout: 4_000,
  });
}
