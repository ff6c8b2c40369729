/** The adapter for OpenAI and every OpenAI-compatible server (vLLM, Ollama, Groq, Azure…). */
import { request, type Dispatcher } from 'undici';
import type { ChatCompletion, ChatCompletionChunk, ProviderAdapter, ProviderRequest } from '../types.ts';
import { createUpstreamHttp, type UpstreamHttpOptions } from '../shared/http.ts';
import { UpstreamError } from '../shared/upstream-error.ts';
import { buildUpstreamRequest } from './request.ts';
import { parseCompletion } from './response.ts';
import { translateStream } from './stream.ts';

/** Timeouts and pool size of the adapter's HTTP client. */
export type OpenAiCompatibleOptions = UpstreamHttpOptions;

type ResponseBody = Dispatcher.ResponseData['body'];

// Error bodies are only excerpted; never buffer an arbitrarily large one.
const ERROR_BODY_LIMIT_BYTES = 64 * 1024;

/** Builds the adapter with its own connection pool; it never retries (the worker owns retries). */
export function createOpenAiCompatibleAdapter(options: OpenAiCompatibleOptions): ProviderAdapter & { close(): Promise<void> } {
  const http = createUpstreamHttp(options);

  async function send(req: ProviderRequest, stream: boolean): Promise<ResponseBody> {
    const call = buildUpstreamRequest(req.target, req.body, stream);
    let response: Dispatcher.ResponseData;
    try {
      response = await request(call.url, {
        dispatcher: http.dispatcher,
        method: 'POST',
        headers: call.headers,
        body: call.body,
        signal: req.signal,
      });
    } catch (err) {
      throw UpstreamError.fromNetwork(err, req.signal, 'request');
    }
    if (response.statusCode < 200 || response.statusCode >= 300) {
      const text = await readLimited(response.body, ERROR_BODY_LIMIT_BYTES).catch(() => '');
      throw UpstreamError.fromResponse(response.statusCode, response.headers, text);
    }
    return response.body;
  }

  async function complete(req: ProviderRequest): Promise<ChatCompletion> {
    const body = await send(req, false);
    let text: string;
    try {
      text = await body.text();
    } catch (err) {
      throw UpstreamError.fromNetwork(err, req.signal, 'body');
    }
    return parseCompletion(text, req.target);
  }

  async function* stream(req: ProviderRequest): AsyncGenerator<ChatCompletionChunk> {
    const body = await send(req, true);
    try {
      yield* translateStream(body, req.target);
    } catch (err) {
      throw UpstreamError.fromNetwork(err, req.signal, 'body');
    } finally {
      // A consumer that stops early must not leave the upstream generating tokens into a pooled socket.
      if (!body.destroyed) body.destroy();
    }
  }

  return { complete, stream, close: () => http.close() };
}

async function readLimited(body: ResponseBody, limitBytes: number): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  let received = 0;
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    received += chunk.byteLength;
    text += decoder.decode(chunk, { stream: true });
    if (received >= limitBytes) {
      body.destroy();
      break;
    }
  }
  return text + decoder.decode();
}
