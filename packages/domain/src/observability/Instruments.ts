/**
 * Every metric Huddle records, declared once: names, help and label names. Labels are bounded
 * sets (routes, models, tiers, outcomes), never user or org ids, so that the number of series
 * stays fixed whatever the traffic.
 */
import { counter, gauge, histogram } from "./Metrics.js"

/** Seconds, for whole requests and upstream calls: from a millisecond to two minutes. */
const durations = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]
/** Seconds, for Huddle's own share of a request: from 50 µs to a second. */
const overheads = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1]

// HTTP, recorded at the edge. `route` is the matched pattern (`POST /v1/orgs/:id/members`);
// `dialect` is the answer's: huddle, openai or jsonrpc.
export const httpRequests = counter("huddle_http_requests_total", "HTTP requests answered, by route, status and dialect.", [
  "route",
  "status",
  "dialect"
])
export const httpDuration = histogram(
  "huddle_http_request_duration_seconds",
  "Whole request, until the last byte of the answer (a stream's end).",
  durations,
  ["route", "dialect"]
)
export const httpFirstByte = histogram(
  "huddle_http_time_to_first_byte_seconds",
  "Until the first byte of the answer's body (a stream's first event).",
  durations,
  ["route", "dialect"]
)
export const httpAdded = histogram(
  "huddle_http_added_seconds",
  "Huddle's own time in a request: the whole request less the time an upstream call was in flight.",
  overheads,
  ["route", "dialect"]
)

// Model calls, recorded by the router (one per attempt) and the metered call (what was paid).
export const upstreamCalls = counter(
  "huddle_upstream_calls_total",
  "Upstream model call attempts by outcome: ok, retried (the same model tried again), fallback (the next model tried), exhausted (no model left), failed_mid_answer, timed_out (the call's time limit), cancelled (the caller left), error (a defect).",
  ["provider", "model", "outcome"]
)
export const upstreamDuration = histogram(
  "huddle_upstream_duration_seconds",
  "One upstream attempt, from the request to its last chunk.",
  durations,
  ["provider", "model"]
)
export const tokens = counter("huddle_tokens_total", "Tokens charged for, by model, tier and direction (input, output).", [
  "model",
  "tier",
  "direction"
])
export const creditsCharged = counter(
  "huddle_credits_charged_total",
  "Credits charged for model calls, by model, tier and paying source (personal, subscription, addon).",
  ["model", "tier", "source"]
)

// Credits.
export const reservations = counter(
  "huddle_reservations_total",
  "Credit reservations by event: held, settled, released, swept (left by a lost instance or a call past its time).",
  ["event"]
)
export const reservationsHeld = gauge("huddle_reservations_held", "Credit reservations this instance holds now.")
export const creditDenials = counter("huddle_credit_denials_total", "Requests refused because no source could pay (402).")

// The edge's other refusals and replays.
export const rateLimited = counter("huddle_rate_limited_total", "Requests refused by a rate limit (429), by limit.", ["limit"])
export const idempotentReplays = counter("huddle_idempotent_replays_total", "Answers replayed for a repeated Idempotency-Key.")

// The council.
export const councilRuns = counter("huddle_council_runs_total", "Council runs by outcome: consensus, degraded, failed.", ["outcome"])
export const councilDropped = counter(
  "huddle_council_participants_dropped_total",
  "Council participants dropped, by the round they were dropped in.",
  ["round"]
)

// Grounding.
export const indexBuilds = counter("huddle_grounding_index_builds_total", "Repository index runs by outcome: indexed, failed.", [
  "outcome"
])
export const filesIndexed = counter("huddle_grounding_files_indexed_total", "Files read into a repository index.")
export const retrievalDuration = histogram(
  "huddle_grounding_retrieval_seconds",
  "Retrieval from a repository index, by depth (focused, deep).",
  durations,
  ["depth"]
)

// Caches and the change feed that keeps them true.
export const cacheLookups = counter(
  "huddle_cache_lookups_total",
  "Cache lookups by cache and result: hit, miss, bypass (the change feed not live, or inside a transaction).",
  ["cache", "result"]
)
export const changeFeedLive = gauge("huddle_change_feed_live", "1 while the change feed listens (caches serve), 0 otherwise.")
export const changeFeedNotifications = counter("huddle_change_feed_notifications_total", "Change notifications received.")
