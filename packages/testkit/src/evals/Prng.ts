/**
 * Seeded pseudo-random numbers for the evaluation: the same seed gives the same questions, the
 * same simulated answers and the same table. Draws are keyed by name (`keyed(seed, "initial",
 * question, model)`), so a draw does not depend on the order calls happen to run in, and the
 * same simulated participant answers a question the same way in a multi run and an auto run.
 */

/** A 32-bit hash of a string: FNV-1a, then murmur3's finaliser to spread the bits. */
export const hash = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

export interface Rng {
  /** A number in [0, 1). */
  readonly next: () => number
  /** An integer in [0, n). */
  readonly int: (n: number) => number
  readonly pick: <A>(items: ReadonlyArray<A>) => A
  /** A copy of `items` in a random order. */
  readonly shuffle: <A>(items: ReadonlyArray<A>) => Array<A>
}

/** mulberry32: small, fast, and good enough for sampling. */
export const rng = (seed: number): Rng => {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  return {
    next,
    int,
    pick: (items) => items[int(items.length)]!,
    shuffle: (items) => {
      const out = [...items]
      for (let i = out.length - 1; i > 0; i--) {
        const j = int(i + 1)
        const swap = out[i]!
        out[i] = out[j]!
        out[j] = swap
      }
      return out
    }
  }
}

/** The generator of one named draw. */
export const keyed = (seed: number, ...names: ReadonlyArray<string | number>): Rng => rng(hash(`${seed}|${names.join("|")}`))
