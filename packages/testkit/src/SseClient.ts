/**
 * Reads a `text/event-stream` response as a client would, with the SSE parser of
 * `@effect/experimental`: every event with its name and JSON data, in order.
 */
import * as Sse from "@effect/experimental/Sse"

export interface Event {
  readonly event: string
  readonly data: any
}

export interface Stream {
  readonly status: number
  readonly headers: Headers
  readonly events: ReadonlyArray<Event>
  /** Comment lines (heartbeats) seen. */
  readonly comments: number
}

export interface Options {
  readonly token?: string
  readonly body?: unknown
  readonly headers?: Record<string, string>
  /** Stops reading (and closes the connection) when this returns true for an event. */
  readonly until?: (event: Event, events: ReadonlyArray<Event>) => boolean
}

export const post = async (url: string, options: Options = {}): Promise<Stream> => {
  const controller = new AbortController()
  const res = await fetch(url, {
    method: "POST",
    signal: controller.signal,
    headers: {
      "content-type": "application/json",
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...options.headers
    },
    body: JSON.stringify(options.body ?? {})
  })
  const events: Array<Event> = []
  let comments = 0
  if (!res.headers.get("content-type")?.startsWith("text/event-stream") || res.body === null) {
    const text = await res.text()
    return { status: res.status, headers: res.headers, events: text ? [{ event: "body", data: JSON.parse(text) }] : [], comments }
  }
  let stop = false
  const parser = Sse.makeParser((event) => {
    if (event._tag === "Retry") return
    const parsed = { event: event.event, data: event.data.length > 0 ? JSON.parse(event.data) : undefined }
    events.push(parsed)
    if (options.until?.(parsed, events)) stop = true
  })
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader()
  while (!stop) {
    const { done, value } = await reader.read()
    if (done) break
    comments += (value.match(/^:/gm) ?? []).length
    parser.feed(value)
  }
  if (stop) controller.abort()
  return { status: res.status, headers: res.headers, events, comments }
}
