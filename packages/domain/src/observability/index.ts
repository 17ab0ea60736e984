/** What Huddle measures and traces: the metrics port and its instruments, the upstream clock, spans for services. */
export * as Instruments from "./Instruments.js"
export * as Metrics from "./Metrics.js"
export * as Traced from "./Traced.js"
export * as UpstreamClock from "./UpstreamClock.js"
