/**
 * Starting and stopping the OpenTelemetry SDK. The SDK packages are imported here, on demand, only when
 * tracing is on: a process without OTEL_* settings loads none of them and registers nothing.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { readTracingSettings, type TracingSettings } from './settings.js';
import { tracing } from './state.js';

export type TracingHandle = NonNullable<Awaited<ReturnType<typeof startTracing>>>;

export interface StartTracingOptions {
  /** the service.name when OTEL_SERVICE_NAME is unset */
  serviceName: string;
  env?: Record<string, string | undefined>;
  /** sent each span as it ends (tests: an in-memory one); tracing is then on whatever the env says */
  exporter?: SpanExporter;
  captureContent?: boolean;
}

/** Starts tracing when the environment asks for it (or an exporter is given); null when it stays off. */
export async function startTracing(opts: StartTracingOptions) {
  const settings: TracingSettings | null = opts.exporter
    ? { exporter: 'otlp', url: null, serviceName: opts.serviceName, captureContent: false }
    : readTracingSettings(opts.env ?? process.env, opts.serviceName);
  if (!settings) return null;
  if (tracing.on) throw new Error('tracing is already started in this process');
  const [{ NodeTracerProvider }, base, { resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/resources'),
  ]);
  let processor: InstanceType<typeof base.SimpleSpanProcessor | typeof base.BatchSpanProcessor>;
  if (opts.exporter) processor = new base.SimpleSpanProcessor(opts.exporter);
  else if (settings.exporter === 'console')
    processor = new base.SimpleSpanProcessor(new base.ConsoleSpanExporter());
  else {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    // OTLP/HTTP with JSON bodies (what this exporter sends); headers come from OTEL_EXPORTER_OTLP_HEADERS.
    processor = new base.BatchSpanProcessor(new OTLPTraceExporter({ url: settings.url ?? undefined }));
  }
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName }),
    spanProcessors: [processor],
  });
  provider.register();
  tracing.on = true;
  tracing.captureContent = opts.captureContent ?? settings.captureContent;
  tracing.tracer = provider.getTracer('abada');
  return {
    /** exports what is buffered now (tests, before a process exits) */
    flush: () => provider.forceFlush(),
    /** exports what is buffered, then stops tracing in this process */
    async shutdown() {
      tracing.on = false;
      tracing.tracer = null;
      await provider.shutdown().catch(() => {});
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
