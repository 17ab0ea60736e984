/**
 * The time a request spends waiting on upstream models: the union of the intervals during which
 * at least one call was in flight (a council's parallel calls count once). The edge starts a
 * clock per request; the router enters and leaves it around each attempt. Huddle's own time is
 * the request's duration less this.
 */
import { FiberRef } from "effect"

export interface UpstreamClock {
  inFlight: number
  since: number
  /** Milliseconds with a call in flight, up to the last time none was. */
  total: number
}

export const make = (): UpstreamClock => ({ inFlight: 0, since: 0, total: 0 })

/** The clock of the request being answered (none outside a request). */
export const current = FiberRef.unsafeMake<UpstreamClock | undefined>(undefined)

export const enter = (clock: UpstreamClock | undefined, now: number) => {
  if (clock !== undefined && clock.inFlight++ === 0) clock.since = now
}

export const leave = (clock: UpstreamClock | undefined, now: number) => {
  if (clock !== undefined && --clock.inFlight === 0) clock.total += now - clock.since
}

/** Milliseconds in flight so far, a call still running included. */
export const elapsed = (clock: UpstreamClock, now: number): number =>
  clock.total + (clock.inFlight > 0 ? now - clock.since : 0)
