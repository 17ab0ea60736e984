/** The cited lines of a file view's address: `?lines=12-30` or `?lines=12`; none when absent or not lines. */
export interface Cited {
  readonly start: number
  readonly end: number
}

export const citedLines = (query: URLSearchParams): Cited | null => {
  const match = /^(\d+)(?:-(\d+))?$/.exec(query.get("lines") ?? "")
  if (match === null) return null
  const start = Number(match[1])
  const end = match[2] === undefined ? start : Number(match[2])
  return start >= 1 && end >= start ? { start, end } : null
}

/** The server answers at most this many lines at once (from the first line unless asked). */
export const linesPerAnswer = 2000

/** Where to start reading so that the cited lines are in the answer, with some context above them. */
export const firstLineFor = (cited: Cited | null): number =>
  cited === null || cited.end <= linesPerAnswer ? 1 : Math.max(1, cited.start - 200)
