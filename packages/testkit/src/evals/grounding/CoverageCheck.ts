/**
 * Test coverage as deep inspection computes it (`DeepInspection.coverage`), against the
 * hand-read truth (`CoverageTruth.ts`): precision and recall of the files it calls tested, and of
 * the files it calls untested (the list a user is given for "which files have no tests?").
 * A source file on one side only (one the indexer did not classify as source, or the truth does
 * not list) counts against both.
 */
import type { Coverage } from "@huddle/domain/grounding/DeepInspection"
import type { Truth } from "./CoverageTruth.js"

export interface Counts {
  /** Files both call tested, files only the coverage calls tested, files only the truth does. */
  readonly tested: { readonly both: number; readonly coverageOnly: number; readonly truthOnly: number }
  readonly untested: { readonly both: number; readonly coverageOnly: number; readonly truthOnly: number }
  /** What disagrees, for the report. */
  readonly disagreements: ReadonlyArray<string>
}

export const compare = (coverage: Coverage, truth: Truth): Counts => {
  const reportedTested = new Set(coverage.sources.filter((s) => s.tests.length > 0).map((s) => s.path))
  const reportedUntested = new Set(coverage.untested)
  const trueTested = new Set(Object.keys(truth.tested))
  const trueUntested = new Set(truth.untested)
  const count = (reported: ReadonlySet<string>, actual: ReadonlySet<string>) => ({
    both: [...reported].filter((p) => actual.has(p)).length,
    coverageOnly: [...reported].filter((p) => !actual.has(p)).length,
    truthOnly: [...actual].filter((p) => !reported.has(p)).length
  })
  const disagreements: Array<string> = []
  const all = [...new Set([...reportedTested, ...reportedUntested, ...trueTested, ...trueUntested])].sort()
  for (const path of all) {
    const said = reportedTested.has(path) ? "tested" : reportedUntested.has(path) ? "untested" : "not a source file"
    const is = trueTested.has(path) ? "tested" : trueUntested.has(path) ? "untested" : "not a source file"
    if (said !== is) disagreements.push(`${truth.pkg}/${path}: coverage says ${said}, truth says ${is}`)
  }
  return { tested: count(reportedTested, trueTested), untested: count(reportedUntested, trueUntested), disagreements }
}

/** Counts summed over packages. */
export const total = (all: ReadonlyArray<Counts>): Counts => {
  const sum = (pick: (c: Counts) => Counts["tested"]) => ({
    both: all.reduce((n, c) => n + pick(c).both, 0),
    coverageOnly: all.reduce((n, c) => n + pick(c).coverageOnly, 0),
    truthOnly: all.reduce((n, c) => n + pick(c).truthOnly, 0)
  })
  return { tested: sum((c) => c.tested), untested: sum((c) => c.untested), disagreements: all.flatMap((c) => c.disagreements) }
}

export const precision = (c: Counts["tested"]) => (c.both + c.coverageOnly === 0 ? Number.NaN : c.both / (c.both + c.coverageOnly))
export const recall = (c: Counts["tested"]) => (c.both + c.truthOnly === 0 ? Number.NaN : c.both / (c.both + c.truthOnly))
