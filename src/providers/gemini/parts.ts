/** One OpenAI content part → one Gemini part: text, inline bytes (data URLs, audio) or a file URL. */
import { InvalidValueError, UnsupportedParameterError } from '../../errors/gateway-error.ts';
import type { ContentPart } from '../../wire/openai-chat.ts';
import type { GeminiPart } from './wire.ts';

// Gemini's image types (https://ai.google.dev/gemini-api/docs/image-understanding).
const IMAGE_TYPES: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
  heif: 'image/heif',
};
const DEFAULT_IMAGE_TYPE = 'image/jpeg';

/** The Gemini part for a content part at `param` (`messages[i].content[j]`); null for empty text, which Gemini refuses. */
export function toGeminiPart(part: ContentPart, param: string, alias: string): GeminiPart | null {
  switch (part.type) {
    case 'text':
      return part.text === undefined || part.text === '' ? null : { text: part.text };
    case 'refusal':
      return part.refusal === undefined || part.refusal === '' ? null : { text: part.refusal };
    case 'image_url':
      return imagePart(part.image_url?.url ?? '', `${param}.image_url.url`);
    case 'input_audio':
      return { inlineData: { mimeType: `audio/${part.input_audio?.format ?? ''}`, data: part.input_audio?.data ?? '' } };
    case 'file':
      return filePart(part.file ?? {}, `${param}.file`, alias);
    default:
      throw new UnsupportedParameterError(`${param}.type`, alias, `content of type '${part.type}'`);
  }
}

// Gemini needs a media type for a URL as well; the extension is all there is to go by.
function guessImageType(url: string): string {
  const path = url.split(/[?#]/, 1)[0] ?? '';
  const extension = /\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase() ?? '';
  return IMAGE_TYPES[extension] ?? DEFAULT_IMAGE_TYPE;
}

function imagePart(url: string, param: string): GeminiPart {
  if (url.startsWith('data:')) return { inlineData: parseDataUrl(url, param) };
  if (/^https?:\/\//i.test(url)) return { fileData: { mimeType: guessImageType(url), fileUri: url } };
  throw new InvalidValueError(param, 'An image must be an http(s) URL or a base64 data URL.');
}

function filePart(file: { file_data?: string; file_id?: string }, param: string, alias: string): GeminiPart {
  if (file.file_data !== undefined) {
    if (!file.file_data.startsWith('data:'))
      throw new InvalidValueError(`${param}.file_data`, 'file_data must be a data URL (data:<media type>;base64,<data>).');
    return { inlineData: parseDataUrl(file.file_data, `${param}.file_data`) };
  }
  // Files uploaded to OpenAI have no meaning at Google.
  if (file.file_id !== undefined) throw new UnsupportedParameterError(`${param}.file_id`, alias, "an uploaded file's id; send the file inline as file_data");
  throw new InvalidValueError(param, 'A file part needs file_data.');
}

// RFC 2397: data:[<media type>][;base64],<data>; Gemini takes base64 only, so plain data is encoded.
function parseDataUrl(url: string, param: string): { mimeType: string; data: string } {
  const match = /^data:([^;,]+)((?:;[^;,]*)*),(.*)$/s.exec(url);
  if (match === null) throw new InvalidValueError(param, 'The data URL must name a media type: data:<media type>;base64,<data>.');
  const [, mimeType = '', parameters = '', payload = ''] = match;
  if (parameters.split(';').includes('base64')) return { mimeType, data: payload };
  try {
    return { mimeType, data: Buffer.from(decodeURIComponent(payload), 'utf8').toString('base64') };
  } catch {
    throw new InvalidValueError(param, 'The data URL is not valid percent-encoded text.');
  }
}
