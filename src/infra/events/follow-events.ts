import type { RedisClient } from '../redis/connections.ts';
import type { RedisKeys } from '../redis/keys.ts';
import { errorToPayload, isTerminal, parseEventLine } from './reply-events.ts';
import { InternalError, type GatewayError, ProviderTimeoutError } from '../../errors/gateway-error.ts';
import { unavailableError } from '../unavailable.ts';
import { EventQueue, type Dispatch } from './event-queue.ts';

/** How a follower reads another request's events. */
export interface FollowOptions {
  /** Read the stream this often until the request ends. */
  pollMs: number;
  /** Give up after this long (the request timeout). */
  timeoutMs: number;
  /** The request had finished when the key was claimed: its events must all be there already. */
  finished: boolean;
}

/**
 * Relays the events of a request this process did not start (an idempotent retry of a
 * finished or running request, or a stream resumed with Last-Event-ID) from its event
 * stream, after `afterSeq`. Its live events go to another process's reply channel, so
 * this reads the stream until a terminal event: retries are rare, a poll is cheap.
 */
export function followEvents(commands: RedisClient, keys: RedisKeys, tenantId: string, requestId: string, afterSeq: number, options: FollowOptions): Dispatch {
  const stream = keys.events(tenantId, requestId);
  const events = new EventQueue();
  const deadline = Date.now() + options.timeoutMs;
  let next = afterSeq + 1;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  const fail = (error: GatewayError) => {
    events.push({ seq: 0, type: 'error', payload: errorToPayload(error) });
    events.close();
  };
  const poll = async () => {
    const entries = await commands.xrange(stream, `0-${next}`, '+');
    for (const [id, fields] of entries) {
      const event = parseEventLine(Number(id.slice(2)), fields[1] ?? '');
      if (!event || event.seq < next) continue;
      next = event.seq + 1;
      events.push(event);
      if (isTerminal(event.type)) return events.close();
    }
    if (options.finished) {
      // Everything was stored before the claim was completed; nothing more will come.
      if (entries.length === 0 && (await commands.exists(stream)) === 0)
        return fail(new InternalError('The stored response of this request is no longer available.'));
      return events.close();
    }
    if (Date.now() > deadline) return fail(new ProviderTimeoutError(`The request did not finish within ${options.timeoutMs} ms.`));
    if (!stopped) timer = setTimeout(() => void poll().catch(readFailed), options.pollMs);
  };
  // Redis away while a stored response is read is a 503 to retry (the response is still there), anything else a 500.
  const readFailed = (error: unknown) => fail(unavailableError(error) ?? new InternalError('Reading the stored response failed.'));
  void poll().catch(readFailed);
  return {
    events,
    resumed: afterSeq > 0,
    cancel: () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      events.close();
    },
  };
}
