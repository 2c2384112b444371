/**
 * OpenTelemetry, when the standard variables ask for it: with `OTEL_EXPORTER_OTLP_ENDPOINT` (or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) set, the SDK starts here, before the modules it instruments
 * are required (this is main.ts's first import), and exports traces over OTLP/HTTP. Unset, this file
 * requires nothing: no OpenTelemetry module is loaded and the start is unchanged.
 */
import { lazyRequire } from '../lazy';
import type * as Otel from './otel';

const endpoint = process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
const disabled = process.env.OTEL_SDK_DISABLED === 'true';

if (endpoint && !disabled) {
  // Required, not imported: an import would load the SDK whether or not tracing is on.
  lazyRequire<typeof Otel>(require, './otel')().startTelemetry();
}
