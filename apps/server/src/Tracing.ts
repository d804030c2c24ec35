/**
 * OpenTelemetry: when `OTEL_EXPORTER_OTLP_ENDPOINT` is set, the spans the core names
 * (`Http.token`, `Interaction.authorize`, `Admin.createApplication`, …) are exported over
 * OTLP/HTTP with JSON bodies, in batches, through `@effect/opentelemetry`'s tracer. Off, nothing
 * of OpenTelemetry is even loaded: the modules are imported only when the export is on.
 */
import { Layer } from "effect"
import type { OtelEnv } from "./Env.js"

/**
 * The layer that sets the runtime's tracer to one exporting to `otel.tracesUrl` (flushed and shut
 * down, 3 s at most, when the runtime is disposed); when `otel` is null, the tracer disabled.
 */
export const layer = async (otel: OtelEnv | null): Promise<Layer.Layer<never>> => {
  // No export: no span is recorded either (each would cost a request steps and allocations)
  if (otel === null) return Layer.setTracerEnabled(false)
  const [NodeSdk, { BatchSpanProcessor }, { OTLPTraceExporter }] = await Promise.all([
    import("@effect/opentelemetry/NodeSdk"),
    import("@opentelemetry/sdk-trace-base"),
    import("@opentelemetry/exporter-trace-otlp-http")
  ])
  const sdk = NodeSdk.layer(() => ({
    resource: { serviceName: otel.serviceName },
    // Batches of at most 512 spans, every 5 s or sooner when full (the SDK's defaults, from OTEL_BSP_*)
    spanProcessor: new BatchSpanProcessor(new OTLPTraceExporter({ url: otel.tracesUrl }))
  }))
  // The Resource it provides is of no use to the server: only the tracer it sets matters
  return sdk as unknown as Layer.Layer<never>
}
