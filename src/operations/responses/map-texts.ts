/** The texts of a Responses request that the PII policy reads and may mask: instructions, message texts, tool outputs, compaction summaries. */
import type { InputContentPart, InputItem, ResponsesRequest } from '../../wire/openai-responses.ts';
import type { TextReplacer } from '../../domain/pii/apply-policy.ts';
import { carriedSummary, carrySummary } from './compaction-summary.ts';

function mapContent(content: string | InputContentPart[], at: string, replace: TextReplacer): string | InputContentPart[] {
  if (typeof content === 'string') return replace(content, at);
  return content.map((part, j) => (typeof part.text === 'string' ? { ...part, text: replace(part.text, `${at}[${j}].text`) } : part));
}

function mapItem(item: InputItem, at: string, replace: TextReplacer): InputItem {
  if (item.content != null && (item.type === undefined || item.type === 'message'))
    return { ...item, content: mapContent(item.content, `${at}.content`, replace) };
  if (item.output != null && item.type === 'function_call_output') return { ...item, output: mapContent(item.output, `${at}.output`, replace) };
  // A compaction's summary reaches the model as text, and anyone can write one (compaction-summary.ts).
  const summary = item.type === 'compaction' ? carriedSummary(item.encrypted_content) : null;
  if (summary !== null) return { ...item, encrypted_content: carrySummary(replace(summary, `${at}.encrypted_content`)) };
  return item;
}

/** The request with each of its texts through `replace`. */
export function mapResponsesTexts<R extends Pick<ResponsesRequest, 'instructions' | 'input'>>(request: R, replace: TextReplacer): R {
  const mapped = { ...request };
  if (typeof request.instructions === 'string') mapped.instructions = replace(request.instructions, 'instructions');
  const { input } = request;
  if (typeof input === 'string') mapped.input = replace(input, 'input');
  else if (Array.isArray(input)) mapped.input = input.map((item, i) => mapItem(item, `input[${i}]`, replace));
  return mapped;
}
