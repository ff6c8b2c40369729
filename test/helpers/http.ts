/** A tiny JSON client for the gateway's non-SDK endpoints (internal API, usage, audit). */

/** A response: status, JSON body and headers. */
export interface JsonResponse {
  status: number;
  // Tests read arbitrary fields of the JSON they assert on; typing each shape would only repeat the assertions.
  body: any;
  headers: Headers;
}

/** Calls `origin + path` with the key as bearer token. */
export async function call(
  origin: string,
  secret: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<JsonResponse> {
  const response = await fetch(`${origin}${path}`, {
    method,
    headers: { authorization: `Bearer ${secret}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null, headers: response.headers };
}

/** Polls `check` until it returns true or `timeoutMs` passes. */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what} not reached within ${timeoutMs} ms`);
}
