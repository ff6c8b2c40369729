/** The three states every page shows the same way: loading, failed, nothing there. */
import type { ComponentChildren } from 'preact';
import { ApiError } from '../api.ts';

/** What is shown while a request is in flight. */
export function Loading() {
  return (
    <p role="status" class="muted">
      Loading…
    </p>
  );
}

/** An API error: the envelope's message and the request id an operator can look up in the logs. */
export function ErrorAlert(props: { error: unknown }) {
  if (props.error === null || props.error === undefined) return null;
  const error = props.error;
  const message = error instanceof Error ? error.message : typeof error === 'string' ? error : 'Something went wrong.';
  const requestId = error instanceof ApiError ? error.requestId : null;
  return (
    <div role="alert" class="alert">
      <p>{message}</p>
      {requestId && (
        <p class="small">
          Request ID: <code>{requestId}</code>
        </p>
      )}
    </div>
  );
}

/** The empty state; its text starts with "No ". */
export function Empty(props: { children: ComponentChildren }) {
  return <p class="muted">{props.children}</p>;
}
