-- Each process instance is one trace (docs/tracing.md): the W3C traceparent of its root span, written when
-- the instance starts with tracing on (null otherwise), handed to workers with every task so each attempt
-- joins the instance's trace.
ALTER TABLE "process_instances" ADD COLUMN "traceparent" text;
