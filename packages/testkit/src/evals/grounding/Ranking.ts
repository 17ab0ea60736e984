/**
 * Retrieval measures over ranked files: the rank of the first expected file in a ranking, and
 * recall@k (an expected file among the first k) and mean reciprocal rank over a set of questions.
 * The reciprocal rank is taken over the whole ranking (0 when no expected file is ranked at all).
 */

/** The 1-based rank of the first expected file in `ranked`; undefined when none is ranked. */
export const firstHit = (ranked: ReadonlyArray<string>, expected: ReadonlyArray<string>): number | undefined => {
  const wanted = new Set(expected)
  const at = ranked.findIndex((path) => wanted.has(path))
  return at === -1 ? undefined : at + 1
}

export interface Summary {
  readonly questions: number
  readonly recallAt5: number
  readonly recallAt10: number
  readonly mrr: number
}

/** recall@5, recall@10 and MRR of questions whose first hits are `ranks`. */
export const summarise = (ranks: ReadonlyArray<number | undefined>): Summary => {
  const n = ranks.length
  const within = (k: number) => (n === 0 ? Number.NaN : ranks.filter((r) => r !== undefined && r <= k).length / n)
  return {
    questions: n,
    recallAt5: within(5),
    recallAt10: within(10),
    mrr: n === 0 ? Number.NaN : ranks.reduce<number>((sum, r) => sum + (r === undefined ? 0 : 1 / r), 0) / n
  }
}
