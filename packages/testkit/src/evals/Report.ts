/** The evaluation's tables and targets, as plain text. */
import type { Summary } from "./CouncilEval.js"

export interface Row {
  readonly name: string
  /** Whether the council ≥ majority-vote target applies (a heterogeneous panel). */
  readonly heterogeneous: boolean
  readonly summary: Summary
}

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
    ["regime", "n", "council", "calls/run", "majority vote", "best single", "vote of proposals", "right in pool", "minority kept", "failed runs"],
    rows.map(({ name, summary: s }) => {
      const best = [...s.singles].sort((a, b) => b.correct - a.correct)[0]
      return [
        name,
        String(s.questions),
        pct(s.council.correct, s.questions),
        s.council.calls.toFixed(1),
        `${pct(s.majority.correct, s.questions)} @${s.majority.calls}`,
        best === undefined ? "n/a" : `${pct(best.correct, s.questions)} (${best.model})`,
        pct(s.proposals.vote, s.questions),
        pct(s.proposals.pool, s.questions),
        `${pct(s.survival.survived, s.survival.eligible)} (${s.survival.survived}/${s.survival.eligible})`,
        String(s.council.failed)
      ]
    })
  )

export const autoTable = (rows: ReadonlyArray<Row>): string =>
  table(
    ["regime", "auto", "always-multi", "always-single", "auto cr/q", "multi cr/q", "single cr/q", "auto/multi cost", "escalated"],
    rows.map(({ name, summary: s }) => [
      name,
      pct(s.auto.correct, s.questions),
      pct(s.council.correct, s.questions),
      pct(s.single.correct, s.questions),
      (s.auto.credits / s.questions).toFixed(1),
      (s.council.credits / s.questions).toFixed(1),
      (s.single.credits / s.questions).toFixed(1),
      pct(s.auto.credits, s.council.credits),
      pct(s.auto.escalated, s.questions)
    ])
  )

export interface Target {
  readonly regime: string
  readonly name: string
  readonly pass: boolean
  readonly detail: string
}

export const targets = (rows: ReadonlyArray<Row>): ReadonlyArray<Target> =>
  rows.flatMap(({ heterogeneous, name, summary: s }): ReadonlyArray<Target> => {
    const council = ratio(s.council.correct, s.questions)
    const majority = ratio(s.majority.correct, s.questions)
    const survival = ratio(s.survival.survived, s.survival.eligible)
    const auto = ratio(s.auto.correct, s.questions)
    const cost = ratio(s.auto.credits, s.council.credits)
    return [
      ...(heterogeneous
        ? [{
          regime: name,
          name: "council >= majority vote at equal calls",
          pass: council >= majority,
          detail: `${pct(s.council.correct, s.questions)} vs ${pct(s.majority.correct, s.questions)} @${s.majority.calls}`
        }]
        : []),
      {
        regime: name,
        name: "correct minority kept as a dissent >= 90%",
        // No question where the council overruled a right answer: nothing was lost.
        pass: s.survival.eligible === 0 || survival >= 0.9,
        detail: `${pct(s.survival.survived, s.survival.eligible)} of ${s.survival.eligible}`
      },
      {
        regime: name,
        name: "auto within 2 points of multi at <= 50% of its cost",
        pass: auto >= council - 0.02 && cost <= 0.5,
        detail: `${pct(s.auto.correct, s.questions)} vs ${pct(s.council.correct, s.questions)}, cost ${pct(s.auto.credits, s.council.credits)}`
      }
    ]
  })

export const targetLines = (all: ReadonlyArray<Target>): string => {
  const width = Math.max(...all.map((t) => t.regime.length))
  return all.map((t) => `${t.pass ? "PASS" : "FAIL"}  ${t.regime.padEnd(width)}  ${t.name}: ${t.detail}`).join("\n")
}
