/**
 * What the fake model upstreams (`FakeOpenAi`, `FakeAnthropic`) share: a real node:http server
 * on a free loopback port, a queue of scripted replies with a default for when it is empty, a
 * record of the requests received and of the clients that hung up before their answer was
 * complete. What a fake writes back, with the timing and fault injection of a scripted answer, is
 * `FakeAnswers`.
 *
 * Real sockets rather than a mocked `fetch`: what the adapters must get right (aborting a
 * request, timeouts, a connection dropped mid-stream) only happens on a real connection.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect, type Scope } from "effect"
import { isReply, type Reply, sendReply } from "./FakeAnswers.js"

export interface RecordedRequest {
  readonly method: string
  /** Without the query. */
  readonly path: string
  /** The path with its query (`/v1/messages?beta=true`). */
  readonly url: string
  readonly headers: IncomingHttpHeaders
  /** The parsed JSON body, or the raw text when it was not JSON (`undefined` when empty). */
  readonly body: unknown
}

export interface Disconnect {
  /** The index in `requests` of the request whose client went away. */
  readonly request: number
  /** Content chunks written before that (0 when it left before the first byte). */
  readonly chunksWritten: number
  /** `Date.now()` when the server saw the connection close. */
  readonly at: number
}

/** One exchange in progress, as a protocol handler drives it. */
export interface Exchange {
  readonly index: number
  readonly res: ServerResponse
  /** True once the client has gone away (or the script dropped the connection). */
  readonly closed: boolean
  /** Content chunks written so far; protocol handlers increment it. */
  chunks: number
  /** Closes the connection abruptly, after what was written has been flushed. */
  readonly drop: () => void
  /** Resolves after `ms`, or at once when the connection closes (so no timer outlives it). */
  readonly wait: (ms: number) => Promise<void>
}

export type Handler<S> = (script: S, request: RecordedRequest, exchange: Exchange) => void | Promise<void>

export interface Options<S> {
  /** Answers when the queue is empty. */
  readonly defaultScript: S
  /** Keep a record of requests (on by default; a benchmark turns it off to keep memory flat). */
  readonly recordRequests?: boolean | undefined
}

export interface FakeServer<S> {
  /** `http://127.0.0.1:<port>` */
  readonly url: string
  readonly requests: ReadonlyArray<RecordedRequest>
  readonly disconnects: ReadonlyArray<Disconnect>
  /** Scripts for the next requests, in order; each is used once. */
  readonly enqueue: (...scripts: ReadonlyArray<S>) => void
  readonly setDefault: (script: S) => void
  /**
   * Scripts chosen by reading each request (a council's round from its prompt), used when the
   * queue is empty; `undefined` from `pick`, or no `pick`, leaves the default to answer.
   */
  readonly respondWith: (pick: ((request: RecordedRequest) => S | undefined) | undefined) => void
  /** Resolves once `count` clients have hung up; rejects after `timeoutMs`. */
  readonly waitForDisconnects: (count?: number, timeoutMs?: number) => Promise<ReadonlyArray<Disconnect>>
  /** Resolves once `count` requests have arrived; rejects after `timeoutMs`. */
  readonly waitForRequests: (count?: number, timeoutMs?: number) => Promise<ReadonlyArray<RecordedRequest>>
  /** Forgets the queue, the records and `respondWith`'s choice (the default stays). */
  readonly reset: () => void
  readonly stop: () => Promise<void>
}

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const parts: Array<Buffer> = []
    req.on("data", (part: Buffer) => parts.push(part))
    req.on("end", () => resolve(parts.length === 1 ? parts[0]!.toString("utf8") : Buffer.concat(parts).toString("utf8")))
    req.on("error", reject)
  })

const parseBody = (text: string): unknown => {
  if (text.length === 0) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** What the provider fakes take from their callers. */
export interface ProviderOptions<S> {
  /** Answers when the queue is empty (default: the provider's default answer). */
  readonly defaultScript?: S
  /** When set, a request without this key gets a 401. */
  readonly apiKey?: string
  /** Keep a record of requests (default true; a benchmark turns it off). */
  readonly recordRequests?: boolean
}

/**
 * Starts a provider fake: requests that `route` accepts are refused with `unauthorized`'s reply
 * when the caller's key is wrong, else answered with a scripted `Reply` or with `answer`.
 */
export const startProvider = <A extends object>(
  options: ProviderOptions<A | Reply>,
  provider: {
    /** An empty script, for when no default is given. */
    readonly emptyScript: A
    readonly route: (method: string, path: string) => boolean
    /** The refusal when the request does not carry `apiKey`, else `undefined`. */
    readonly unauthorized: (apiKey: string, request: RecordedRequest) => Reply | undefined
    readonly answer: (script: A, request: RecordedRequest, exchange: Exchange) => Promise<void>
  }
): Promise<FakeServer<A | Reply>> => {
  const handler: Handler<A | Reply> = (script, request, exchange) => {
    const refusal = options.apiKey === undefined ? undefined : provider.unauthorized(options.apiKey, request)
    if (refusal !== undefined) return sendReply(refusal, exchange)
    return isReply(script) ? sendReply(script, exchange) : provider.answer(script, request, exchange)
  }
  return start<A | Reply>(
    { defaultScript: options.defaultScript ?? provider.emptyScript, recordRequests: options.recordRequests },
    (method, path) => (provider.route(method, path) ? handler : undefined)
  )
}

/** Splits an answer into pieces that concatenate back to it: word groups, or characters when asked for more pieces than words. */
export const splitAnswer = (answer: string, chunks: number | ReadonlyArray<string> | undefined): ReadonlyArray<string> => {
  if (Array.isArray(chunks)) return chunks
  const words = answer.match(/\s*\S+\s*/g) ?? (answer.length > 0 ? [answer] : [])
  const wanted = typeof chunks === "number" ? Math.max(1, Math.floor(chunks)) : words.length
  if (wanted > words.length) {
    const chars = Array.from(answer)
    return groups(chars, Math.min(wanted, chars.length))
  }
  return groups(words, wanted)
}

const groups = (items: ReadonlyArray<string>, count: number): ReadonlyArray<string> => {
  if (count <= 0 || items.length === 0) return []
  const out: Array<string> = []
  for (let i = 0; i < count; i++) {
    const from = Math.floor((i * items.length) / count)
    const to = Math.floor(((i + 1) * items.length) / count)
    out.push(items.slice(from, to).join(""))
  }
  return out
}

/** About four characters a token, like the domain's estimate. */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4)

/** Estimated prompt tokens of a chat body's `messages` (and `system`, for Anthropic). */
export const promptTokensOf = (body: unknown): number => {
  if (typeof body !== "object" || body === null) return 0
  let total = 0
  const system = (body as { system?: unknown }).system
  if (typeof system === "string") total += estimateTokens(system)
  const messages = (body as { messages?: unknown }).messages
  if (Array.isArray(messages)) {
    for (const message of messages) {
      const content = typeof message === "object" && message !== null ? (message as { content?: unknown }).content : undefined
      if (typeof content === "string") total += estimateTokens(content)
    }
  }
  return total
}

export const start = <S extends object>(
  options: Options<S>,
  route: (method: string, path: string) => Handler<S> | undefined
): Promise<FakeServer<S>> => {
  const record = options.recordRequests ?? true
  let defaultScript = options.defaultScript
  let pick: ((request: RecordedRequest) => S | undefined) | undefined
  let queue: Array<S> = []
  let requests: Array<RecordedRequest> = []
  let disconnects: Array<Disconnect> = []
  let received = 0
  const waiters = new Set<() => void>()
  const notify = () => {
    for (const waiter of waiters) waiter()
  }

  const waitUntil = <A>(ready: () => A | undefined, timeoutMs: number, what: string): Promise<A> =>
    new Promise((resolve, reject) => {
      const now = ready()
      if (now !== undefined) return resolve(now)
      const check = () => {
        const value = ready()
        if (value === undefined) return
        clearTimeout(timer)
        waiters.delete(check)
        resolve(value)
      }
      const timer = setTimeout(() => {
        waiters.delete(check)
        reject(new Error(`fake upstream: timed out after ${timeoutMs} ms waiting for ${what}`))
      }, timeoutMs)
      waiters.add(check)
    })

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const index = received++
    let closed = false
    let dropped = false
    let wake: (() => void) | undefined
    const exchange: Exchange = {
      index,
      res,
      get closed() {
        return closed
      },
      chunks: 0,
      drop: () => {
        dropped = true
        closed = true
        // end() rather than destroy(): what was written still arrives, then the connection
        // closes in the middle of the body.
        res.socket?.end()
      },
      wait: (ms) =>
        new Promise<void>((resolve) => {
          if (closed) return resolve()
          const timer = setTimeout(() => {
            wake = undefined
            resolve()
          }, ms)
          wake = () => {
            clearTimeout(timer)
            wake = undefined
            resolve()
          }
        })
    }
    res.on("close", () => {
      if (!res.writableFinished && !dropped) {
        closed = true
        disconnects.push({ request: index, chunksWritten: exchange.chunks, at: Date.now() })
        notify()
      }
      closed = true
      wake?.()
    })
    const text = await readBody(req)
    const url = req.url ?? "/"
    const path = url.split("?")[0]!
    const request: RecordedRequest = { method: req.method ?? "GET", path, url, headers: req.headers, body: parseBody(text) }
    if (record) {
      requests.push(request)
      notify()
    }
    const handler = route(request.method, path)
    if (handler === undefined) {
      res.writeHead(404, { "content-type": "application/json" })
      res.end(`{"error":{"message":"fake upstream: no route for ${request.method} ${path}","type":"invalid_request_error"}}`)
      return
    }
    const script = queue.length > 0 ? queue.shift()! : pick?.(request) ?? defaultScript
    await handler(script, request, exchange)
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent && !res.destroyed) {
        res.writeHead(500, { "content-type": "text/plain" })
        res.end(`fake upstream failed: ${String(error)}`)
      } else {
        res.destroy()
      }
    })
  })
  server.keepAliveTimeout = 5_000

  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        url: `http://127.0.0.1:${port}`,
        get requests() {
          return requests
        },
        get disconnects() {
          return disconnects
        },
        enqueue: (...scripts) => {
          queue.push(...scripts)
        },
        setDefault: (script) => {
          defaultScript = script
        },
        respondWith: (next) => {
          pick = next
        },
        waitForDisconnects: (count = 1, timeoutMs = 1_000) =>
          waitUntil(() => (disconnects.length >= count ? disconnects : undefined), timeoutMs, `${count} client disconnect(s)`),
        waitForRequests: (count = 1, timeoutMs = 1_000) =>
          waitUntil(() => (requests.length >= count ? requests : undefined), timeoutMs, `${count} request(s)`),
        reset: () => {
          queue = []
          pick = undefined
          requests = []
          disconnects = []
          received = 0
        },
        stop: () =>
          new Promise<void>((resolveStop) => {
            server.close(() => resolveStop())
            server.closeAllConnections()
          })
      })
    })
  })
}

/** `start` as a scoped Effect: the server stops when the scope closes. */
export const scoped = <F extends { readonly stop: () => Promise<void> }>(start: () => Promise<F>): Effect.Effect<F, never, Scope.Scope> =>
  Effect.acquireRelease(Effect.promise(start), (fake) => Effect.promise(() => fake.stop()))
