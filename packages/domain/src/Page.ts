/** Cursor pagination: lists are ordered by id (time-ordered), newest first. */
export interface PageRequest {
  readonly limit: number
  /** The `next_cursor` of the previous page. */
  readonly cursor?: string | undefined
}

export interface Page<A> {
  readonly data: ReadonlyArray<A>
  readonly next_cursor: string | null
}

/** Repositories fetch `limit + 1` rows; the extra row only tells that another page exists. */
export const fromRows = <A extends { readonly id: string }>(rows: ReadonlyArray<A>, limit: number): Page<A> =>
  rows.length > limit
    ? { data: rows.slice(0, limit), next_cursor: rows[limit - 1]!.id }
    : { data: rows, next_cursor: null }
