/** Prints the turn section's results (bench/turn.mjs), for that script and for `npm run bench`. */

/** Whether the money after the run fails its check: a balance off its ledger, negative, or anything left held or leased. */
export const failedMoney = (money) => money.mismatched.length > 0 || money.negative > 0 || money.held > 0 || (money.leased ?? 0) > 0 || (money.openLeases ?? 0) > 0

export const print = ({ rows, loaded, money }) => {
  console.log("")
  console.log("## A single-mode huddle turn (#15): database writes and CPU per turn (Huddle on PostgreSQL, through the counting relay)")
  console.log("")
  console.log("| turn | writes | commits | round trips | CPU ms | p50 ms |")
  console.log("| --- | --- | --- | --- | --- | --- |")
  for (const r of rows) {
    console.log(`| ${r.kind === "start" ? "first (new session)" : "next (in a session)"}${r.stream ? ", streamed" : ""} | ${r.writes.toFixed(2)} | ${r.commits.toFixed(2)} | ${r.roundTrips.toFixed(2)} | ${r.cpuMs.toFixed(2)} | ${r.p50.toFixed(2)} |`)
  }
  console.log("")
  console.log(`Under load (${loaded.connections} connections, ${loaded.seconds} s of first turns): ${loaded.rps.toFixed(0)} turns/s, ${loaded.cpuMsPerTurn.toFixed(2)} ms of CPU per turn.`)
  const first = rows.find((r) => r.kind === "start" && !r.stream)
  console.log("Statements of a first turn, per turn:")
  for (const s of first.statements) console.log(`  ${s.perTurn.toFixed(2)} × ${s.sql.slice(0, 120)}`)
  console.log(`Money: ${money.accounts} accounts, ${money.mismatched.length} balance ≠ ledger, ${money.negative} negative, ${money.held} held${money.openLeases === undefined ? "" : `, ${money.openLeases} leases open`} (${failedMoney(money) ? "FAILED" : "PASS"})`)
  for (const row of money.heldRows ?? []) console.log(`  held: ${JSON.stringify(row)}`)
}

