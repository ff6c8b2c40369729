import type { BatchError } from '../../infra/store/repository.ts';

/** One line of a batch's input, parsed: its `custom_id` and the body it sends. */
export interface BatchLine {
  customId: string;
  body: Record<string, unknown>;
}

/** What a line's body must pass beyond its shape: the endpoint's schema, a model the catalog serves (null: it passes). */
export type BodyCheck = (body: Record<string, unknown>) => Omit<BatchError, 'line'> | null;

// Long enough for any key a client derives from its data; short enough that 50,000 of them stay small.
const MAX_CUSTOM_ID = 512;

/** Whether `value` is a JSON object (not an array, not null). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function refused(line: number, code: string, message: string, param: string | null = null): BatchError {
  return { code, message, param, line };
}

/**
 * Reads one line of a batch's JSONL input (`line` 1-based, as errors name it), as OpenAI does:
 * `{custom_id, method: "POST", url, body}`, its url the batch's endpoint. Returns the line, or
 * the error that fails the batch.
 */
export function parseBatchLine(text: string, line: number, endpoint: string, check: BodyCheck): BatchLine | BatchError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return refused(line, 'invalid_json_line', `Line ${line} is not valid JSON: each line of a batch's input must be one JSON object.`);
  }
  if (!isObject(parsed)) return refused(line, 'invalid_json_line', `Line ${line} is not a JSON object.`);
  const { custom_id: customId, method, url, body } = parsed;
  if (typeof customId !== 'string' || customId === '')
    return refused(line, 'missing_required_parameter', `Line ${line} has no 'custom_id' (a non-empty string).`, 'custom_id');
  if (customId.length > MAX_CUSTOM_ID)
    return refused(line, 'invalid_value', `Line ${line}: 'custom_id' may have at most ${MAX_CUSTOM_ID} characters.`, 'custom_id');
  if (method !== 'POST') return refused(line, 'invalid_value', `Line ${line}: 'method' must be "POST".`, 'method');
  if (url !== endpoint)
    return refused(
      line,
      'invalid_url',
      `Line ${line}: 'url' is ${JSON.stringify(url)}, but this batch's endpoint is '${endpoint}'; every line must use it.`,
      'url',
    );
  if (!isObject(body)) return refused(line, 'missing_required_parameter', `Line ${line} has no 'body' object.`, 'body');
  if (body.stream === true) return refused(line, 'invalid_value', `Line ${line}: a batch's requests cannot stream; remove 'stream'.`, 'body.stream');
  if (body.background === true) return refused(line, 'invalid_value', `Line ${line}: a batch's requests cannot be background responses.`, 'body.background');
  const problem = check(body);
  if (problem) return { ...problem, message: `Line ${line}: ${problem.message}`, line };
  return { customId, body };
}
