/**
 * The council section's report (bench/council.mjs's results), printed as `npm run bench` prints
 * its other sections. Apart from bench/council.mjs so that bench/run.mjs can print it without
 * loading the domain into the load generator's process.
 */
import { fmt, printTable } from "./table.mjs"

export const print = (results) => {
  const { sequential: s, concurrent: c } = results
  console.log("")
  console.log(`Council: ${results.callsPerCouncil} scripted calls per council, fixed latencies; critical path ${results.criticalPathMs} ms (the sum over rounds of the slowest seat)`)
  console.log("÷ path: wall time ÷ critical path; overhead: wall − critical path; outside rounds: before the first, between and after the last; CPU: the council process's user+system CPU per council")
  printTable([
    ["councils", "runs", "wall ms (median)", "÷ path, median", "÷ path, worst", "overhead ms", "outside rounds ms", "CPU ms/council", "wanted", "verdict"],
    ...[["one at a time", s], [`${c.at} at once`, c]].map(([label, x]) => [
      label,
      String(x.runs),
      fmt(x.wallMsMedian, 1),
      fmt(x.ratioMedian, 3),
      fmt(x.ratioWorst, 3),
      fmt(x.overheadMsMedian, 1),
      fmt(x.outsideRoundsMsMedian, 1),
      fmt(x.cpuMsPerCouncil, 1),
      `≤ ${results.target.toFixed(2)}`,
      x.ratioWorst <= results.target ? "PASS" : "MISS"
    ])
  ])
  console.log("  Each round's time over its slowest seat (mean, one at a time) = before that seat was asked + its answer's lateness (timers) + from its last delta to the round's end:")
  for (const [round, r] of Object.entries(s.rounds)) {
    console.log(`    ${round.padEnd(12)} ${fmt(r.overheadMs, 1).padStart(5)} ms = ${fmt(r.startLagMs, 1)} + ${fmt(r.lateMs, 1)} + ${fmt(r.endLagMs, 1)}`)
  }
  console.log(`  CPU for scale: one metered call on its own (same provider, ${results.callsAtOnce} at a time) ${fmt(results.callCpuMs, 2)} ms; a council's ${results.callsPerCouncil} calls ≈ ${fmt(results.callCpuMs * results.callsPerCouncil, 1)} ms of its ${fmt(s.cpuMsPerCouncil, 1)} ms`)
}
