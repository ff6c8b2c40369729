import type { ScriptedRedis } from '../redis/scripts.ts';
import type { RedisKeys } from '../redis/keys.ts';
import { isTerminal, parseEventLine, payloadParts } from './reply-events.ts';

/** What a request's event log already holds, for a job that runs again. */
export interface EventLogState {
  /** Where a re-run resumes numbering. */
  lastSeq: number;
  /** A terminal event is there: the first run finished. */
  finished: boolean;
  /** Chunks reached the client: a stream that must not be repeated. */
  sentChunks: boolean;
  /** What those chunks carried, as countable text, and the alias that produced them. */
  streamedText: string;
  streamedModel: string | null;
  /** The deployment the first event named (none in logs of gateways older than deployment pools). */
  streamedDeployment: string | null;
}

/**
 * Reads a request's event log (written by an earlier run of its job); `readChunk` is its
 * operation's reading of one streamed event.
 */
export async function readEventLog(
  redis: ScriptedRedis,
  keys: RedisKeys,
  job: { tenantId: string; requestId: string },
  readChunk: (payload: string) => { text: string; model: string | null },
): Promise<EventLogState> {
  const entries = await redis.xrange(keys.events(job.tenantId, job.requestId), '-', '+');
  const state: EventLogState = { lastSeq: 0, finished: false, sentChunks: false, streamedText: '', streamedModel: null, streamedDeployment: null };
  for (const [id, fields] of entries) {
    const event = parseEventLine(Number(id.slice(2)), fields[1] ?? '');
    if (!event) continue;
    state.lastSeq = event.seq;
    state.finished = isTerminal(event.type);
    state.streamedDeployment ??= event.deployment ?? null;
    if (event.type !== 'chunk') continue;
    state.sentChunks = true;
    for (const part of payloadParts(event.payload)) {
      const chunk = readChunk(part);
      state.streamedText += chunk.text;
      state.streamedModel = chunk.model ?? state.streamedModel;
    }
  }
  return state;
}
