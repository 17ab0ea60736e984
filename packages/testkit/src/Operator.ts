/** Shortcuts for tests: what only the operator may do, through the operator API. */
import type { TestServer } from "./TestServer.js"

export type Target = { readonly user_id: string } | { readonly org_id: string; readonly balance: "subscription" | "addon" }

const tokenOf = (server: TestServer) => {
  if (server.operatorToken === null) throw new Error("this test server has the operator API off")
  return server.operatorToken
}

/** Mints credits; returns the account's new balance. */
export const grant = async (server: TestServer, target: Target, amount: number, reason = "test grant"): Promise<number> => {
  const res = await server.request("POST", "/v1/operator/credits/grants", {
    token: tokenOf(server),
    body: { ...target, amount, reason }
  })
  if (res.status !== 201) throw new Error(`operator grant: expected 201, got ${res.status}: ${res.text}`)
  return res.body.balance
}

/** An account's ledger (first page, newest first) and balance. */
export const ledger = async (server: TestServer, target: Target) => {
  const query = new URLSearchParams(Object.entries(target)).toString()
  const res = await server.request("GET", `/v1/operator/credits/ledger?${query}&limit=100`, { token: tokenOf(server) })
  if (res.status !== 200) throw new Error(`operator ledger: expected 200, got ${res.status}: ${res.text}`)
  return res.body as { data: ReadonlyArray<{ delta: number; kind: string; balance_after: number; reason: string; created_at: string }>; balance: number }
}
