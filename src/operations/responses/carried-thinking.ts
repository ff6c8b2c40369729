/**
 * Anthropic's signed thinking blocks, carried through a Responses client in the reasoning item's
 * `encrypted_content`: the Responses API's own place for reasoning a client cannot read and must
 * send back as it came (OpenAI's clients do, with `store: false`). Anthropic refuses a turn of a
 * tool loop with thinking on whose earlier thinking comes back without its signature. The content
 * is the blocks' JSON in base64url behind a version mark, so that what another provider put there
 * is left alone.
 */
import { Value } from '@sinclair/typebox/value';
import { Type } from '@sinclair/typebox';
import { ThinkingBlockSchema, type ThinkingBlock } from '../../wire/openai-chat.ts';

const MARK = 'gw.thinking.1:';
const ThinkingBlocksSchema = Type.Array(ThinkingBlockSchema, { minItems: 1 });

/** The reasoning item's `encrypted_content` for the blocks. */
export function carryThinking(blocks: readonly ThinkingBlock[]): string {
  return MARK + Buffer.from(JSON.stringify(blocks), 'utf8').toString('base64url');
}

/** The blocks an `encrypted_content` carries, or null when it is not ours (or not intact). */
export function carriedThinking(content: string | null | undefined): ThinkingBlock[] | null {
  if (typeof content !== 'string' || !content.startsWith(MARK)) return null;
  try {
    const blocks: unknown = JSON.parse(Buffer.from(content.slice(MARK.length), 'base64url').toString('utf8'));
    return Value.Check(ThinkingBlocksSchema, blocks) ? blocks : null;
  } catch {
    return null;
  }
}
