/**
 * An OTLP/HTTP trace receiver on loopback, as a collector would be: it accepts `POST /v1/traces`
 * in the JSON encoding (processes under test set OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/json)
 * and keeps every span, flattened, with its attributes as plain values.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One received span. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  events: Array<{ name: string; attributes: Record<string, unknown> }>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
}

/** A running receiver. */
export interface OtlpReceiver {
  /** For OTEL_EXPORTER_OTLP_ENDPOINT: http://127.0.0.1:<port> */
  url: string;
  spans: ReceivedSpan[];
  /** Export requests received, whatever they held. */
  requests: number;
  /** Resolves with the spans once `ready` holds for them; throws after `timeoutMs`. */
  waitFor(ready: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean; arrayValue?: { values?: AnyValue[] } };
type KeyValue = { key: string; value: AnyValue };
type OtlpSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: KeyValue[];
  events?: Array<{ name: string; attributes?: KeyValue[] }>;
  status?: { code?: number };
};
type ExportRequest = { resourceSpans?: Array<{ resource?: { attributes?: KeyValue[] }; scopeSpans?: Array<{ spans?: OtlpSpan[] }> }> };

function valueOf(value: AnyValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

function attributesOf(list: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((entry) => [entry.key, valueOf(entry.value)]));
}

function spansOf(body: ExportRequest): ReceivedSpan[] {
  return (body.resourceSpans ?? []).flatMap((resourceSpans) => {
    const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name']);
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        service,
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? '',
        name: span.name,
        kind: span.kind,
        attributes: attributesOf(span.attributes),
        events: (span.events ?? []).map((event) => ({ name: event.name, attributes: attributesOf(event.attributes) })),
        statusCode: span.status?.code ?? 0,
      })),
    );
  });
}

/** Starts a receiver on 127.0.0.1. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const receiver = { spans: [] as ReceivedSpan[], requests: 0 };
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      receiver.requests++;
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !req.headers['content-type']?.startsWith('application/json')) {
        res.writeHead(415).end();
        return;
      }
      receiver.spans.push(...spansOf(JSON.parse(body) as ExportRequest));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}`,
    async waitFor(ready: (spans: ReceivedSpan[]) => boolean, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!ready(receiver.spans)) {
        if (Date.now() > deadline)
          throw new Error(`the expected spans did not arrive; received: ${JSON.stringify(receiver.spans.map((span) => `${span.service} ${span.name}`))}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      return receiver.spans;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
