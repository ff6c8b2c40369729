/** Upstream JSON → ChatCompletion (filling the fields lenient OpenAI-compatible servers omit), or embeddings. */
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ChatCompletionSchema, type ChatCompletion } from '../../wire/openai-chat.ts';
import { EmbeddingsResponseSchema, type EmbeddingsResponse } from '../../wire/openai-embeddings.ts';
import type { ProviderTarget } from '../types.ts';
import { isRecord } from '../../wire/json.ts';
import { invalidResponse } from '../shared/upstream-error.ts';
import { errorFromPayload, isErrorPayload } from './errors.ts';

type JsonObject = Record<string, unknown>;

const completionChecker = TypeCompiler.Compile(ChatCompletionSchema);
const embeddingsChecker = TypeCompiler.Compile(EmbeddingsResponseSchema);

/** Validates a parsed non-streamed completion body; extra fields pass through untouched. */
export function parseCompletion(parsed: unknown, target: ProviderTarget): ChatCompletion {
  if (isErrorPayload(parsed)) {
    // Some servers answer 200 with an error object; treat it as the 5xx it stands for.
    throw errorFromPayload(parsed, 'server_error');
  }
  if (!isRecord(parsed) || !Array.isArray(parsed.choices)) throw invalidResponse('no choices array');
  const completion = normaliseCompletion(parsed, parsed.choices, target);
  if (!completionChecker.Check(completion)) {
    const first = completionChecker.Errors(completion).First();
    throw invalidResponse(first === undefined ? 'schema mismatch' : `${first.path} ${first.message}`);
  }
  return completion;
}

function normaliseCompletion(parsed: JsonObject, choices: unknown[], target: ProviderTarget): unknown {
  return {
    ...parsed,
    id: typeof parsed.id === 'string' ? parsed.id : `chatcmpl-${crypto.randomUUID()}`,
    object: 'chat.completion',
    created: typeof parsed.created === 'number' ? Math.trunc(parsed.created) : Math.floor(Date.now() / 1000),
    model: typeof parsed.model === 'string' ? parsed.model : target.upstreamModel,
    choices: choices.map((choice, position) => normaliseChoice(choice, position)),
  };
}

function normaliseChoice(choice: unknown, position: number): unknown {
  if (!isRecord(choice)) return choice;
  const message = isRecord(choice.message) ? choice.message : {};
  return {
    ...choice,
    index: typeof choice.index === 'number' ? choice.index : position,
    // A tool-call-only answer may omit content; OpenAI sends null there.
    message: { ...message, role: message.role ?? 'assistant', content: message.content ?? null },
    finish_reason: choice.finish_reason ?? null,
  };
}

/** Validates a parsed embeddings body: one vector per input, in order (some servers omit `object`). */
export function parseEmbeddings(parsed: unknown, target: ProviderTarget, inputs: number): EmbeddingsResponse {
  if (isErrorPayload(parsed)) throw errorFromPayload(parsed, 'server_error');
  if (!isRecord(parsed) || !Array.isArray(parsed.data)) throw invalidResponse('no data array');
  const data = (parsed.data as unknown[]).map((item, position) =>
    isRecord(item) ? { ...item, object: 'embedding', index: typeof item.index === 'number' ? item.index : position } : item,
  );
  const response: unknown = { ...parsed, object: 'list', model: typeof parsed.model === 'string' ? parsed.model : target.upstreamModel, data };
  if (!embeddingsChecker.Check(response)) {
    const first = embeddingsChecker.Errors(response).First();
    throw invalidResponse(first === undefined ? 'schema mismatch' : `${first.path} ${first.message}`);
  }
  if (response.data.length !== inputs) throw invalidResponse(`${response.data.length} embeddings for ${inputs} inputs`);
  response.data.sort((a, b) => a.index - b.index);
  return response;
}
