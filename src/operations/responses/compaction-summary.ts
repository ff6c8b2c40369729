/**
 * The summary a compaction (POST /v1/responses/compact) made of a conversation, carried in the
 * compaction item's `encrypted_content`, where the Responses API puts what a client holds and
 * sends back unread. OpenAI seals its own; the gateway does not encrypt ours: the summary is of
 * the client's own conversation (nothing in it is kept from the client), a key would have to be
 * shared and rotated by every web and worker process, and a client that forges one only puts text
 * into its own context, as a user message can (the PII policy reads it like one: map-texts.ts).
 * The content is a small JSON in base64url behind a version mark, so that a blob made elsewhere
 * (OpenAI's `gAAAA…`) is told apart and refused with a clear error rather than misread.
 */
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

const MARK = 'gw.compaction.1:';
const CarriedSchema = Type.Object({ summary: Type.String() });

/** What the model reads in place of the compacted conversation, before its summary. */
export const SUMMARY_PREFIX =
  'The conversation before this point was compacted to save context. What follows is a summary of it, written to carry the work on from where it stood:\n\n';

/** The compaction item's `encrypted_content` for a summary. */
export function carrySummary(summary: string): string {
  return MARK + Buffer.from(JSON.stringify({ summary }), 'utf8').toString('base64url');
}

/** The summary an `encrypted_content` carries, or null when this gateway did not make it (or it is not intact). */
export function carriedSummary(content: string | null | undefined): string | null {
  if (typeof content !== 'string' || !content.startsWith(MARK)) return null;
  try {
    const carried: unknown = JSON.parse(Buffer.from(content.slice(MARK.length), 'base64url').toString('utf8'));
    return Value.Check(CarriedSchema, carried) ? carried.summary : null;
  } catch {
    return null;
  }
}

/** Why a compaction item's `encrypted_content` cannot be read: the message of its 400. */
export const FOREIGN_COMPACTION =
  "This compaction item was not made by this gateway: its encrypted_content is sealed by whoever made it (OpenAI's can be read by OpenAI only). " +
  "Compact the conversation with this gateway's POST /v1/responses/compact, or send the conversation's own items instead.";
