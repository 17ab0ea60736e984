/** The evaluation's tables and targets, as plain text. */
import type { Summary } from "./CouncilEval.js"

export interface Row {
  readonly name: string
  /** Whether the council ≥ majority-vote target applies (a heterogeneous panel). */
  readonly heterogeneous: boolean
  /** A stress regime: its targets are shown for information, not judged. */
  readonly stress: boolean
  readonly summary: Summary
}

/** A regime's name as the tables print it: a stress regime's marked. */
const label = (row: Row) => row.stress ? `${row.name} *` : row.name

const pct = (part: number, whole: number) => whole === 0 ? "n/a" : `${((100 * part) / whole).toFixed(1)}%`
const ratio = (part: number, whole: number) => whole === 0 ? Number.NaN : part / whole

/** Columns padded to their widest cell; numbers right-aligned. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((cell, i) => i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)).join("  ").trimEnd()
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n")
}

export const accuracyTable = (rows: ReadonlyArray<Row>): string =>
  table(
    [
      "regime",
      "n",
      "council",
      "calls/run",
      "majority vote",
      "(fresh resamples)",
      "best single",
      "vote of proposals",
      "right in pool",
      "minority kept",
      "right but dropped",
      "failed runs"
    ],
    rows.map((row) => {
      const s = row.summary
      const best = [...s.singles].sort((a, b) => b.correct - a.correct)[0]
      return [
        label(row),
        String(s.questions),
        pct(s.council.correct, s.questions),
        s.council.calls.toFixed(1),
        `${pct(s.majority.correct, s.questions)} @${s.majority.calls}`,
        s.majority.fresh === undefined ? "n/a" : `(${pct(s.majority.fresh, s.questions)})`,
        best === undefined ? "n/a" : `${pct(best.correct, s.questions)} (${best.model})`,
        pct(s.proposals.vote, s.questions),
        pct(s.proposals.pool, s.questions),
        `${pct(s.survival.survived, s.survival.eligible)} (${s.survival.survived}/${s.survival.eligible})`,
        String(s.survival.dropped),
        String(s.council.failed)
      ]
    })
  )

/** Seat 1 asked each question k times, the plurality of its answers taken: how much resampling one model buys. */
export const selfConsistencyTable = (rows: ReadonlyArray<Row>): string | undefined => {
  const curves = rows.flatMap((row) => row.summary.selfConsistency === undefined ? [] : [{ row, curve: row.summary.selfConsistency }])
  if (curves.length === 0) return undefined
  return table(
    ["regime", "seat 1", ...curves[0]!.curve.map((point) => `@${point.k}`)],
    curves.map(({ curve, row }) => [
      label(row),
      row.summary.seats[0] ?? "",
      ...curve.map((point) => pct(point.correct, row.summary.questions))
    ])
  )
}

/**
 * The escalation rate at which auto mode would cost half of always-multi: auto pays its opening
 * (seat 1's proposal and a second opinion) on every question, and on the escalated ones the rest
 * of a council (seat 2's full proposal among it), so its share of multi's cost is about
 * `o + e·(1 − p)`: o the opening's share, p seat 1's proposal's.
 */
export const escalationLimit = (s: Summary): number => {
  const opening = ratio(s.opening, s.council.credits)
  const first = ratio(s.single.credits, s.council.credits)
  return (0.5 - opening) / (1 - first)
}

const limitOf = (s: Summary): string => {
  const limit = escalationLimit(s)
  return Number.isFinite(limit) ? `${(100 * limit).toFixed(1)}%` : "n/a"
}

export const autoTable = (rows: ReadonlyArray<Row>): string =>
  table(
    [
      "regime",
      "auto",
      "always-multi",
      "always-single",
      "auto cr/q",
      "multi cr/q",
      "single cr/q",
      "auto/multi cost",
      "escalated",
      "50% cost needs escalated <="
    ],
    rows.map((row) => {
      const s = row.summary
      return [
        label(row),
      pct(s.auto.correct, s.questions),
      pct(s.council.correct, s.questions),
      pct(s.single.correct, s.questions),
      (s.auto.credits / s.questions).toFixed(1),
      (s.council.credits / s.questions).toFixed(1),
      (s.single.credits / s.questions).toFixed(1),
        pct(s.auto.credits, s.council.credits),
        pct(s.auto.escalated, s.questions),
        limitOf(s)
      ]
    })
  )

export interface Target {
  readonly regime: string
  /** Shown for information (a stress regime), not judged. */
  readonly informational: boolean
  readonly name: string
  readonly pass: boolean
  readonly detail: string
}

export const targets = (rows: ReadonlyArray<Row>): ReadonlyArray<Target> =>
  rows.flatMap(({ heterogeneous, name, stress, summary: s }): ReadonlyArray<Target> => {
    const council = ratio(s.council.correct, s.questions)
    const majority = ratio(s.majority.correct, s.questions)
    const survival = ratio(s.survival.survived, s.survival.eligible)
    const auto = ratio(s.auto.correct, s.questions)
    const cost = ratio(s.auto.credits, s.council.credits)
    return [
      ...(heterogeneous
        ? [{
          regime: name,
          informational: stress,
          name: "council >= majority vote at equal calls",
          pass: council >= majority,
          detail: `${pct(s.council.correct, s.questions)} vs ${pct(s.majority.correct, s.questions)} @${s.majority.calls}` +
            (s.majority.fresh === undefined ? "" : ` (fresh resamples: ${pct(s.majority.fresh, s.questions)})`)
        }]
        : []),
      {
        regime: name,
        informational: stress,
        name: "correct minority kept as a dissent >= 90%",
        // No question where the council overruled a right answer: nothing was lost.
        pass: s.survival.eligible === 0 || survival >= 0.9,
        detail: `${pct(s.survival.survived, s.survival.eligible)} of ${s.survival.eligible}` +
          (s.survival.dropped === 0 ? "" : `; not counted: ${s.survival.dropped} where every right participant had been dropped`)
      },
      {
        regime: name,
        informational: stress,
        name: "auto within 2 points of multi at <= 50% of its cost",
        pass: auto >= council - 0.02 && cost <= 0.5,
        detail: `${pct(s.auto.correct, s.questions)} vs ${pct(s.council.correct, s.questions)}, cost ${pct(s.auto.credits, s.council.credits)}` +
          ` (escalated ${pct(s.auto.escalated, s.questions)}; 50% needs <= ${limitOf(s)})`
      }
    ]
  })

/** The judged targets as PASS/FAIL; a stress regime's as (pass)/(fail), for information. */
export const targetLines = (all: ReadonlyArray<Target>): string => {
  const width = Math.max(...all.map((t) => t.regime.length))
  const line = (t: Target) => {
    const verdict = t.informational ? (t.pass ? "(pass)" : "(fail)") : t.pass ? "PASS  " : "FAIL  "
    return `${verdict}  ${t.regime.padEnd(width)}  ${t.name}: ${t.detail}`
  }
  const judged = all.filter((t) => !t.informational)
  const info = all.filter((t) => t.informational)
  return [
    ...judged.map(line),
    ...(info.length === 0 ? [] : ["", "Stress regimes (*): for information, not judged", ...info.map(line)])
  ].join("\n")
}
