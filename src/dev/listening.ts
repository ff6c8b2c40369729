/** Whether a server listens at an address: dev's test before it falls back to a server of its own. */
import { connect } from 'node:net';

const PROBE_TIMEOUT_MS = 2_000;

/**
 * Whether anything accepts a TCP connection at host:port (host as a URL writes it, an IPv6
 * address in brackets) within 2 s. A server that listens but refuses dev (a password, an auth
 * rule) counts: falling back would hide its error, which dev's own connection then reports.
 */
export async function listening(host: string, port: number): Promise<boolean> {
  const socket = connect({ host: host.replace(/^\[(.*)\]$/, '$1'), port, timeout: PROBE_TIMEOUT_MS });
  return new Promise<boolean>((resolve) => {
    socket.once('connect', () => resolve(true));
    socket.once('timeout', () => resolve(false));
    socket.once('error', () => resolve(false));
  }).finally(() => socket.destroy());
}
