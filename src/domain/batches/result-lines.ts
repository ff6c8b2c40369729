import { GatewayError, type ErrorType } from '../../errors/gateway-error.ts';
import { toAnthropicEnvelope } from '../../errors/to-envelope.ts';
import type { BatchLineResult } from '../../infra/store/repository.ts';

/** A line that never ran (the batch expired or was cancelled first): its result has status code 0. */
export const NEVER_RAN = 0;

/** Why lines that never ran did not: their error code and message. */
export const UNRUN = {
  expired: { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' },
  cancelled: { code: 'batch_cancelled', message: 'This request was not executed: the batch was cancelled first.' },
} as const;

interface Envelope {
  error: { type: ErrorType; code: string; message: string; param: string | null };
}

/**
 * One line of a batch's output or error file, as OpenAI writes them: a request that ran has its
 * `response` (the body as the endpoint answered it, embedded as it was stored, never re-encoded),
 * one that never ran only its `error`.
 */
export function openAiResultLine(result: BatchLineResult): string {
  const head = `{"id":${JSON.stringify(result.requestId)},"custom_id":${JSON.stringify(result.customId)}`;
  if (result.statusCode === NEVER_RAN) {
    const { error } = JSON.parse(result.body) as Envelope;
    return `${head},"response":null,"error":${JSON.stringify({ code: error.code, message: error.message })}}\n`;
  }
  return `${head},"response":{"status_code":${result.statusCode},"request_id":${JSON.stringify(result.requestId)},"body":${result.body}},"error":null}\n`;
}

/** One line of an Anthropic Message Batch's results: `{custom_id, result: {type: succeeded|errored|canceled|expired, …}}`. */
export function anthropicResultLine(result: BatchLineResult): string {
  const head = `{"custom_id":${JSON.stringify(result.customId)},"result":`;
  if (result.status === 'succeeded') return `${head}{"type":"succeeded","message":${result.body}}}\n`;
  const { error } = JSON.parse(result.body) as Envelope;
  if (result.statusCode === NEVER_RAN) return `${head}{"type":"${error.code === UNRUN.expired.code ? 'expired' : 'canceled'}"}}\n`;
  const envelope = toAnthropicEnvelope(new GatewayError(result.statusCode, error.type, error.code, error.message, { param: error.param }), result.requestId);
  return `${head}${JSON.stringify({ type: 'errored', error: { type: 'error', error: envelope.error } })}}\n`;
}
