/** Small statistics of the benchmark's series. */

/** Percentile of a sorted array (nearest rank). */
export const percentile = (sorted, p) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))])

export const median = (xs) => {
  const s = [...xs].filter(Number.isFinite).sort((a, b) => a - b)
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

/** The least-squares slope of `y` over `x` (NaN with fewer than two distinct x). */
export const slope = (points) => {
  const n = points.length
  if (n < 2) return NaN
  const mx = points.reduce((a, p) => a + p.x, 0) / n
  const my = points.reduce((a, p) => a + p.y, 0) / n
  const sxx = points.reduce((a, p) => a + (p.x - mx) ** 2, 0)
  const sxy = points.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0)
  return sxx === 0 ? NaN : sxy / sxx
}

/**
 * Throughput within latency bounds: for each bound (p99, ms), the most req/s among the steps whose
 * p99 stayed within it, and at how many connections.
 */
export const withinBounds = (steps, bounds) =>
  Object.fromEntries(bounds.map((bound) => {
    const best = steps.filter((s) => s.p99 <= bound).sort((a, b) => b.rps - a.rps)[0]
    return [bound, best ? { rps: best.rps, connections: best.connections, p99: best.p99 } : undefined]
  }))

/**
 * A bootstrap interval of the median of `xs`: the `level` share (default 0.9) of the medians of
 * `draws` resamples with replacement, from a fixed seed so that a report can be re-derived.
 */
export const medianInterval = (xs, { level = 0.9, draws = 2000 } = {}) => {
  const values = xs.filter(Number.isFinite)
  if (values.length < 2) return [NaN, NaN]
  let seed = 0x2545f491
  const random = () => {
    seed ^= seed << 13
    seed ^= seed >>> 17
    seed ^= seed << 5
    return (seed >>> 0) / 2 ** 32
  }
  const medians = []
  for (let d = 0; d < draws; d++) medians.push(median(Array.from(values, () => values[Math.floor(random() * values.length)])))
  medians.sort((a, b) => a - b)
  return [percentile(medians, ((1 - level) / 2) * 100), percentile(medians, (1 - (1 - level) / 2) * 100)]
}
