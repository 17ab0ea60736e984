/**
 * The metrics port: what Huddle counts and measures, recorded through whatever the host exports
 * them with (the server: Prometheus). A `Context.Reference` whose default records nothing, so an
 * embedder that exports no metrics provides nothing and pays for nothing but a call.
 *
 * Instruments are declared once (`Instruments.ts`) with their label names, and a recording must
 * name exactly those labels: the set of series is fixed by the catalogue, never by a caller.
 * Recording is synchronous and never fails: a metric must not change what a request does.
 */
import { Context } from "effect"

export type Labels<L extends string> = { readonly [K in L]: string }

interface Declared<Kind extends string, L extends string> {
  readonly kind: Kind
  /** Prometheus conventions: snake case, the unit last (`_seconds`, `_total`). */
  readonly name: string
  readonly help: string
  readonly labels: ReadonlyArray<L>
}

/** Only ever goes up (requests, tokens, credits charged). */
export interface Counter<L extends string = never> extends Declared<"counter", L> {}

/** Goes up and down (reservations held now, a feed connected or not). */
export interface Gauge<L extends string = never> extends Declared<"gauge", L> {}

/** A distribution (durations), in the buckets given: upper bounds, ascending. */
export interface Histogram<L extends string = never> extends Declared<"histogram", L> {
  readonly buckets: ReadonlyArray<number>
}

export type Instrument = Counter<string> | Gauge<string> | Histogram<string>

/** Whether a value is an instrument (the catalogue is `Object.values(Instruments)` filtered by it). */
export const isInstrument = (value: unknown): value is Instrument =>
  typeof value === "object" && value !== null && "kind" in value && "name" in value

export const counter = <L extends string = never>(name: string, help: string, labels: ReadonlyArray<L> = []): Counter<L> => ({
  kind: "counter",
  name,
  help,
  labels
})

export const gauge = <L extends string = never>(name: string, help: string, labels: ReadonlyArray<L> = []): Gauge<L> => ({
  kind: "gauge",
  name,
  help,
  labels
})

export const histogram = <L extends string = never>(
  name: string,
  help: string,
  buckets: ReadonlyArray<number>,
  labels: ReadonlyArray<L> = []
): Histogram<L> => ({ kind: "histogram", name, help, labels, buckets })

export interface Service {
  /** Whether anything is recorded: work done only to feed a metric can be skipped when not. */
  readonly enabled: boolean
  /** Adds `value` (default 1) to a counter, or to a gauge (negative to lower it). */
  readonly add: <L extends string>(instrument: Counter<L> | Gauge<L>, labels: Labels<L>, value?: number) => void
  readonly set: <L extends string>(instrument: Gauge<L>, labels: Labels<L>, value: number) => void
  readonly observe: <L extends string>(instrument: Histogram<L>, labels: Labels<L>, value: number) => void
}

const ignore = () => {}

export const disabled: Service = { enabled: false, add: ignore, set: ignore, observe: ignore }

export class Metrics extends Context.Reference<Metrics>()("@huddle/domain/Metrics", {
  defaultValue: (): Service => disabled
}) {}
