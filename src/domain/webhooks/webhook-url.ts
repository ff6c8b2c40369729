/** The rules of a webhook URL at registration: absolute https, resolving only to public addresses (unless private URLs are allowed). */
import { isIP } from 'node:net';
import { InvalidValueError } from '../../errors/gateway-error.ts';
import { isPublicAddress } from './address-rules.ts';

/** Resolves a host name to every address it has (the port of src/infra/webhooks/guarded-agent.ts's `resolveHost`). */
export type ResolveHost = (hostname: string) => Promise<string[]>;

/** What a URL is checked against. */
export interface WebhookUrlRules {
  /** WEBHOOK_ALLOW_PRIVATE_URLS: http, and private or loopback addresses, are allowed too. */
  allowPrivate: boolean;
  resolve: ResolveHost;
}

const MAX_URL_LENGTH = 2048;

function refuse(message: string): never {
  throw new InvalidValueError('url', message);
}

/** The URL, normalised; a 400 naming `url` when it breaks a rule. Delivery checks the address again (src/infra/webhooks/guarded-agent.ts). */
export async function checkWebhookUrl(raw: string, rules: WebhookUrlRules): Promise<string> {
  if (raw.length > MAX_URL_LENGTH) refuse(`'url' must be at most ${MAX_URL_LENGTH} characters.`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    refuse(`'url' must be an absolute URL; got '${raw}'.`);
  }
  const schemes = rules.allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) refuse(`'url' must be ${rules.allowPrivate ? 'an http or https' : 'an https'} URL; got '${url.protocol}'.`);
  if (url.username !== '' || url.password !== '') refuse("'url' must not carry credentials; verify deliveries by their signature instead.");
  if (url.hash !== '') refuse("'url' must not have a fragment.");
  if (!rules.allowPrivate) await requirePublicHost(url.hostname, rules.resolve);
  return url.href;
}

async function requirePublicHost(hostname: string, resolve: ResolveHost): Promise<void> {
  const host = hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[];
  if (isIP(host) !== 0) addresses = [host];
  else {
    try {
      addresses = await resolve(host);
    } catch {
      refuse(`The host '${host}' of 'url' does not resolve.`);
    }
  }
  if (addresses.length === 0) refuse(`The host '${host}' of 'url' does not resolve.`);
  const blocked = addresses.find((address) => !isPublicAddress(address));
  if (blocked !== undefined) refuse(`'url' must resolve to public addresses only; '${host}' resolves to ${blocked}.`);
}
