/**
 * What a member's calls cost, read from the ledgers the operator sees: the member's personal
 * balance and the org's two balances (a call is paid from the org's pool or, by the member's
 * fallback, personally). Each metered call is one reservation: its rows net to what it was
 * charged, and its `settle` row says it ended. Counting settled reservations counts the calls
 * Huddle charged.
 */
import type { Accounts, Orgs, TestServer } from "@huddle/testkit"
import { expect } from "vitest"

interface Row {
  readonly id: string
  readonly delta: number
  readonly kind: string
  readonly reservation_id: string | null
}

export interface Snapshot {
  readonly rows: ReadonlyArray<Row>
  readonly balances: ReadonlyArray<number>
}

export interface Call {
  readonly reservation: string
  readonly charged: number
}

const page = async (server: TestServer.TestServer, query: string) => {
  const res = await server.request("GET", `/v1/operator/credits/ledger?${query}&limit=100`, { token: server.operatorToken! })
  expect(res.status, res.text).toBe(200)
  expect(res.body.next_cursor, "more than one page of ledger rows").toBeNull()
  return { rows: res.body.data as ReadonlyArray<Row>, balance: res.body.balance as number }
}

/** The member's and the org's ledgers now. */
export const of = async (server: TestServer.TestServer, member: Accounts.TestUser, org?: Orgs.TestOrg): Promise<Snapshot> => {
  const queries = [
    `user_id=${member.id}`,
    ...(org === undefined ? [] : [`org_id=${org.id}&balance=subscription`, `org_id=${org.id}&balance=addon`])
  ]
  const pages = await Promise.all(queries.map((query) => page(server, query)))
  return { rows: pages.flatMap((p) => p.rows), balances: pages.map((p) => p.balance) }
}

/** Every balance added up. */
export const total = (snapshot: Snapshot): number => snapshot.balances.reduce((sum, balance) => sum + balance, 0)

/** The calls settled between two snapshots, each with what it was charged (its rows' net). */
export const settledSince = (before: Snapshot, after: Snapshot): ReadonlyArray<Call> => {
  const seen = new Set(before.rows.map((row) => row.id))
  const fresh = after.rows.filter((row) => !seen.has(row.id) && row.reservation_id !== null)
  const byReservation = new Map<string, Array<Row>>()
  for (const row of fresh) byReservation.set(row.reservation_id!, [...(byReservation.get(row.reservation_id!) ?? []), row])
  return [...byReservation.entries()]
    .filter(([, rows]) => rows.some((row) => row.kind === "settle"))
    .map(([reservation, rows]) => ({ reservation, charged: -rows.reduce((sum, row) => sum + row.delta, 0) }))
}
