/** The states every page shares: loading, and a problem said in the server's words. */
import type { Problem } from "../api.js"

export const Loading = ({ what }: { readonly what: string }) => (
  <p class="loading" role="status">Loading {what}…</p>
)

export const ProblemNote = ({ problem }: { readonly problem: Problem | null }) =>
  problem === null ? null : <p class="problem" role="alert">{problem.message}</p>
