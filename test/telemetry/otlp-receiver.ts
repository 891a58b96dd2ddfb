/**
 * A minimal OTLP/HTTP traces receiver for tests: a node:http server taking `POST /v1/traces` with JSON
 * bodies (what @opentelemetry/exporter-trace-otlp-http sends; gzip accepted), decoding every span into
 * the test's shape. Anything it cannot decode (protobuf, a bad body) is answered 415/400 and kept in
 * `refused`, so a test notices instead of silently seeing no spans.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import type { SeenSpan } from './story.js';

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
};
type KeyValue = { key: string; value: AnyValue };

const KINDS = ['UNSPECIFIED', 'INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'];

function decodeValue(v: AnyValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(decodeValue);
  return null;
}

const attrs = (list: KeyValue[] | undefined) =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key, decodeValue(kv.value)]));

/** Ids are hex in OTLP/JSON; base64 (the protobuf JSON mapping's default) is converted too. */
const hexId = (id: string | undefined) =>
  !id ? '' : /^[0-9a-f]+$/i.test(id) ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex');

interface OtlpJson {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind?: number;
        attributes?: KeyValue[];
        status?: { code?: number; message?: string };
      }[];
    }[];
  }[];
}

export function decodeOtlpJson(body: OtlpJson): SeenSpan[] {
  const out: SeenSpan[] = [];
  for (const rs of body.resourceSpans ?? []) {
    const service = String(attrs(rs.resource?.attributes)['service.name'] ?? '');
    for (const ss of rs.scopeSpans ?? [])
      for (const s of ss.spans ?? [])
        out.push({
          traceId: hexId(s.traceId),
          spanId: hexId(s.spanId),
          parentSpanId: hexId(s.parentSpanId) || null,
          name: s.name,
          kind: KINDS[s.kind ?? 0],
          attributes: attrs(s.attributes),
          status: { code: s.status?.code ?? 0, message: s.status?.message },
          service,
        });
  }
  return out;
}

export interface OtlpReceiver {
  /** the base URL to give as OTEL_EXPORTER_OTLP_ENDPOINT */
  url: string;
  readonly spans: SeenSpan[];
  readonly refused: string[];
  /** the content types of the requests received */
  readonly contentTypes: string[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: SeenSpan[] = [];
  const refused: string[] = [];
  const contentTypes: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const type = String(req.headers['content-type'] ?? '');
      contentTypes.push(type);
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !type.startsWith('application/json')) {
        refused.push(`${req.method} ${req.url} ${type}`);
        res.writeHead(415).end();
        return;
      }
      try {
        let raw = Buffer.concat(chunks);
        if (req.headers['content-encoding'] === 'gzip') raw = gunzipSync(raw);
        spans.push(...decodeOtlpJson(JSON.parse(raw.toString('utf8')) as OtlpJson));
      } catch (e) {
        refused.push(`undecodable body: ${String(e)}`);
        res.writeHead(400).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    refused,
    contentTypes,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
