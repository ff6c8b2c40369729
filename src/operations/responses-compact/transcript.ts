/**
 * A Responses conversation as one text the summary call reads: each item an entry headed by who
 * said or did it. Text, not chat turns, so that every provider takes it as it is: no tool
 * definitions for the calls in it (Anthropic wants them), no signatures to carry back (Anthropic's
 * thinking, Gemini's calls), and items chat cannot express (a custom tool's call, a shell call,
 * which Codex's history may hold) are still summarized: compacting is how a session sheds them.
 * Images and files are named, not sent: the user messages that hold them are kept anyway.
 */
import { InvalidValueError } from '../../errors/gateway-error.ts';
import type { InputContentPart, InputItem } from '../../wire/openai-responses.ts';
import { carriedSummary, FOREIGN_COMPACTION } from '../responses/compaction-summary.ts';
import { splitCallId } from '../signed-call-ids.ts';

/** One entry: its heading and its text. */
interface Entry {
  who: string;
  text: string;
}

function partText(part: InputContentPart): string {
  switch (part.type) {
    case 'input_text':
    case 'output_text':
    case 'reasoning_text':
    case 'summary_text':
      return part.text ?? '';
    case 'refusal':
      return `(refused) ${part.refusal ?? ''}`;
    case 'input_image':
      return '[an image]';
    case 'input_file':
      return part.filename == null ? '[a file]' : `[a file: ${part.filename}]`;
    default:
      return `[${part.type}]`;
  }
}

function contentText(content: string | InputContentPart[] | undefined): string {
  if (content === undefined) return '';
  return typeof content === 'string' ? content : content.map(partText).join('\n');
}

/** A thing `type` names that the transcript has no words of its own for: its fields, as JSON. */
function otherEntry(type: string, item: InputItem): Entry {
  const { type: _type, id: _id, status: _status, ...fields } = item;
  return { who: type, text: JSON.stringify(fields) };
}

function reasoningEntry(item: InputItem): Entry | null {
  const parts = [...(item.summary ?? []), ...(Array.isArray(item.content) ? item.content : [])];
  const text = parts.map((part) => (typeof part.text === 'string' ? part.text : '')).join('\n');
  return text === '' ? null : { who: 'assistant (reasoning)', text };
}

function compactionEntry(item: InputItem, param: string): Entry {
  const summary = carriedSummary(item.encrypted_content);
  if (summary === null) throw new InvalidValueError(`${param}.encrypted_content`, FOREIGN_COMPACTION);
  return { who: 'summary of the conversation before this point', text: summary };
}

function entryOf(item: InputItem, param: string): Entry | null {
  // As /v1/responses reads them: an item without a type is a message, or a reference when all it has is an id.
  const type = item.type ?? (item.role === undefined && item.id != null ? 'item_reference' : 'message');
  switch (type) {
    case 'message':
      return { who: item.role ?? 'user', text: contentText(item.content) };
    case 'function_call': {
      const name = item.namespace == null ? item.name : `${item.namespace}.${item.name ?? ''}`;
      return { who: `assistant called ${name ?? 'a tool'} (call ${splitCallId(item.call_id ?? '').id})`, text: item.arguments ?? '' };
    }
    case 'function_call_output':
      return { who: `result of call ${splitCallId(item.call_id ?? '').id}`, text: contentText(item.output) };
    case 'reasoning':
      return reasoningEntry(item);
    case 'compaction':
      return compactionEntry(item, param);
    case 'item_reference':
      throw new InvalidValueError(param, "Item references cannot be resolved in a compaction: send the item itself in 'input'.");
    default:
      return otherEntry(type, item);
  }
}

/** The transcript of `input`; throws a GatewayError naming the item it cannot read. */
export function transcriptOf(input: string | InputItem[]): string {
  if (typeof input === 'string') return `[user]\n${input}`;
  return input
    .map((item, i) => entryOf(item, `input[${i}]`))
    .filter((entry) => entry !== null)
    .map(({ who, text }) => `[${who}]\n${text}`)
    .join('\n\n');
}
