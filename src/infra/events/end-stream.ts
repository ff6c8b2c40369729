/**
 * Ends the events of a request that will never run (a background response cancelled before any
 * worker took its job): its client's stream, and whoever resumes it, read a terminal event and
 * stop, rather than wait for a job that is gone.
 */
import type { RedisClient } from '../redis/connections.ts';
import type { RedisKeys } from '../redis/keys.ts';
import { encodeEventLine, encodeReplyMessage } from './reply-events.ts';

/** Appends the one terminal event (`done`, sequence number 1) to the request's stream and tells its web process. */
export async function endStream(
  commands: RedisClient,
  keys: RedisKeys,
  request: { tenantId: string; requestId: string; replyChannel: string; ttlMs: number },
): Promise<void> {
  const stream = keys.events(request.tenantId, request.requestId);
  const event = { seq: 1, line: encodeEventLine('done', '{}') };
  await commands.multi().xadd(stream, `0-${event.seq}`, 'e', event.line).pexpire(stream, request.ttlMs).exec();
  await commands.spublish(request.replyChannel, encodeReplyMessage(request.requestId, [event]));
}
