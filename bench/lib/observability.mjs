/**
 * #16 in the benchmark: what Huddle's `/metrics` counted, set beside the benchmark's own counts
 * and the ledger, and what the trace sink received.
 */
import * as Scrape from "@huddle/testkit/Scrape"
import * as Postgres from "./postgres.mjs"

const completions = "POST /v1/chat/completions"

/** One instance's counts of chat completions and credits, from its `/metrics`. */
export const scraped = async (url, token) => {
  const { families, status } = await Scrape.scrape(url, token)
  if (status !== 200) throw new Error(`${url}/metrics answered ${status}`)
  return {
    completions: Scrape.total(families, "huddle_http_requests_total", { route: completions }),
    answered: Scrape.total(families, "huddle_http_requests_total", { route: completions, status: "200" }),
    refused: Scrape.total(families, "huddle_http_requests_total", { route: completions, status: "402" }),
    cut: Scrape.total(families, "huddle_http_requests_total", { route: completions, status: "499" }),
    credits: Scrape.total(families, "huddle_credits_charged_total"),
    settled: Scrape.total(families, "huddle_reservations_total", { event: "settled" }),
    held: Scrape.total(families, "huddle_reservations_held"),
    upstreamOk: Scrape.total(families, "huddle_upstream_calls_total", { outcome: "ok" })
  }
}

/** Summed over instances. */
export const sum = (list) => Object.fromEntries(Object.keys(list[0]).map((key) => [key, list.reduce((a, x) => a + x[key], 0)]))

/** Credits the ledger says were charged: everything taken by reservations, net of what was given back. */
export const ledgerCharged = async (databaseUrl) =>
  (await Postgres.query(databaseUrl, "SELECT COALESCE(-SUM(delta), 0)::float8 AS charged FROM credit_ledger WHERE kind <> 'grant'"))[0].charged

/** What the trace sink received: exports, spans, spans by name. */
export const sinkCounts = async (url) => (await fetch(`${url}/count`)).json()
