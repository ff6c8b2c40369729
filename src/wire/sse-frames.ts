/** The frames of the server-sent events the gateway writes (WHATWG HTML §9.2), whatever the operation's dialect. */

/** The terminator OpenAI-style streams end with. */
export const SSE_DONE = 'data: [DONE]\n\n';
/** A comment frame that keeps idle connections (and proxies) from timing out. */
export const SSE_KEEP_ALIVE = ': keep-alive\n\n';

const NEWLINE = /\r\n|\r|\n/;

/** One outgoing `data:` frame (with its `id:` when given), ending with the blank line that dispatches it. */
export function formatSseData(json: string, id?: string): string {
  const data = json
    .split(NEWLINE)
    .map((line) => `data: ${line}`)
    .join('\n');
  return id === undefined ? `${data}\n\n` : `id: ${id}\n${data}\n\n`;
}

/** One outgoing named event (`event:` then its `data:` frame), as Anthropic's and the Responses API's streams send them. */
export function formatSseEvent(name: string, json: string, id?: string): string {
  return `event: ${name}\n${formatSseData(json, id)}`;
}
