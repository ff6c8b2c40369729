/**
 * The parts of the Gemini API's wire format (v1beta `generateContent` and `streamGenerateContent`)
 * that the adapter writes and reads: request bodies, responses (one per SSE event when streamed),
 * error bodies. Types only. Reference: https://ai.google.dev/api/generate-content
 */

/** Text, or thought text when `thought` is true; `thoughtSignature` may ride on any part. */
export interface GeminiTextPart {
  text: string;
  thought?: boolean;
  thoughtSignature?: string;
}

/** Bytes sent inline, base64-encoded. */
export interface GeminiInlineDataPart {
  inlineData: { mimeType: string; data: string };
}

/** A file the API fetches (an http(s) URL or a Files API URI). */
export interface GeminiFileDataPart {
  fileData: { mimeType: string; fileUri: string };
}

/** A call the model made; Gemini 3 requires its `thoughtSignature` back on the next turn. */
export interface GeminiFunctionCallPart {
  functionCall: { name: string; args?: Record<string, unknown>; id?: string };
  thoughtSignature?: string;
}

/** The result of a call, sent in a `user` turn. */
export interface GeminiFunctionResponsePart {
  functionResponse: { name: string; response: Record<string, unknown>; id?: string };
}

/** One part of a turn. */
export type GeminiPart = GeminiTextPart | GeminiInlineDataPart | GeminiFileDataPart | GeminiFunctionCallPart | GeminiFunctionResponsePart;

/** One turn of the conversation. */
export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

/** Gemini's OpenAPI-subset Schema (function parameters), as schema.ts produces it. */
export type GeminiSchema = Record<string, unknown>;

/** A function the model may call. */
export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  parameters?: GeminiSchema;
}

/** `AUTO`, `ANY` (must call; optionally one of `allowedFunctionNames`) or `NONE`. */
export interface GeminiToolConfig {
  functionCallingConfig: { mode: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] };
}

/** Reasoning settings: a token budget (Gemini 2.5) or a level (Gemini 3). */
export interface GeminiThinkingConfig {
  thinkingBudget?: number;
  thinkingLevel?: 'minimal' | 'low' | 'medium' | 'high';
  includeThoughts?: boolean;
}

/** Sampling and output settings. */
export interface GeminiGenerationConfig {
  temperature?: number;
  topP?: number;
  topK?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseMimeType?: string;
  responseJsonSchema?: Record<string, unknown>;
  thinkingConfig?: GeminiThinkingConfig;
}

/** The body of `generateContent` and `streamGenerateContent`. */
export interface GeminiRequest {
  contents: GeminiContent[];
  systemInstruction?: { parts: GeminiTextPart[] };
  tools?: Array<{ functionDeclarations: GeminiFunctionDeclaration[] }>;
  toolConfig?: GeminiToolConfig;
  generationConfig?: GeminiGenerationConfig;
}

/** One candidate answer. */
export interface GeminiCandidate {
  content?: { role?: string; parts?: GeminiPart[] };
  finishReason?: string;
  index?: number;
  finishMessage?: string;
  safetyRatings?: unknown[];
}

/** Token counts; `candidatesTokenCount` excludes thought tokens, which `thoughtsTokenCount` counts. */
export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
  totalTokenCount?: number;
}

/** A `generateContent` answer, or one event of a streamed one. */
export interface GeminiResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
}

/** The `error` object of an error body (google.rpc.Status in JSON). */
export interface GeminiError {
  code?: number;
  message?: string;
  status?: string;
  details?: Array<Record<string, unknown>>;
}
