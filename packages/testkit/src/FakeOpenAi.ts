/**
 * A fake OpenAI-compatible Chat Completions server: a real HTTP server on a free loopback port
 * that answers `POST …/chat/completions` from a queue of scripts, streaming (`stream: true`,
 * server-sent events ending in `data: [DONE]`) or not (one `chat.completion` JSON).
 *
 * ```ts
 * const fake = await FakeOpenAi.start()
 * fake.enqueue({ answer: "Hello there", chunks: 2, usage: { prompt_tokens: 7, completion_tokens: 2 } })
 * fake.enqueue(FakeOpenAi.rateLimited("3"))
 * // point a client at fake.baseUrl (`http://127.0.0.1:<port>/v1`)
 * fake.requests // what it received; fake.disconnects: clients that hung up mid-answer
 * await fake.stop()
 * ```
 *
 * Streams look like OpenAI's: a first chunk with the role, one chunk per piece of the answer,
 * a chunk with `finish_reason` and an empty delta, then (only when the request asked with
 * `stream_options.include_usage`) a chunk with `choices: []` and the usage. With
 * `usagePlacement: "last-content-chunk"` the last piece carries `finish_reason` and the usage
 * instead, as vLLM and llama.cpp do.
 *
 * `POST …/embeddings` takes the same queue: an `Answer` is answered with one vector per input
 * (`dimensions` long, default 8, made from the input's characters so that the same input gets
 * the same vector), as floats or base64 (`encoding_format`), and `usage.prompt_tokens` (the
 * script's `usage.prompt_tokens`, else the estimate); a `Reply` is sent as it is.
 */
import type { Effect, Scope } from "effect"
import * as FakeAnswers from "./FakeAnswers.js"
import * as FakeUpstream from "./FakeUpstream.js"

export type { Reply } from "./FakeAnswers.js"
export type { Disconnect, RecordedRequest } from "./FakeUpstream.js"

export interface Usage {
  readonly prompt_tokens: number
  readonly completion_tokens: number
  /** How many of `prompt_tokens` OpenAI read from its prompt cache. */
  readonly prompt_tokens_details?: { readonly cached_tokens: number }
}

/** A scripted answer; every field is optional. */
export interface Answer extends FakeAnswers.AnswerFaults {
  /** Default: `"Hello from the fake upstream."` */
  readonly answer?: string
  /** How many pieces to split the answer into (default: one per word), or the pieces themselves. */
  readonly chunks?: number | ReadonlyArray<string>
  /** Default: the estimated prompt tokens of the request, and one token per piece. */
  readonly usage?: Usage
  /** Default `"final-chunk"` (OpenAI's own, only when asked for); `"missing"` sends none. */
  readonly usagePlacement?: "final-chunk" | "last-content-chunk" | "missing"
  /** Default `"stop"`. */
  readonly finishReason?: string
  /** End the stream after the last chunk without `data: [DONE]`. */
  readonly omitDone?: boolean
}

export type Script = Answer | FakeAnswers.Reply

export interface Options extends FakeUpstream.ProviderOptions<Script> {
  /** When set, a request without `Authorization: Bearer <apiKey>` gets a 401 (which echoes the key it was sent). */
  readonly apiKey?: string
}

export interface FakeOpenAi extends FakeUpstream.FakeServer<Script> {
  /** `url` + `/v1`, what an OpenAI client takes as its base URL. */
  readonly baseUrl: string
}

export const defaultAnswer = "Hello from the fake upstream."

const error = (status: number, type: string, message: string, headers?: Readonly<Record<string, string>>): FakeAnswers.Reply => ({
  status,
  body: { error: { message, type, param: null, code: null } },
  ...(headers === undefined ? {} : { headers })
})

/** 429, with `Retry-After` when given (seconds, or an HTTP date). */
export const rateLimited = (retryAfter?: string): FakeAnswers.Reply =>
  error(429, "rate_limit_exceeded", "Rate limit reached for requests", retryAfter === undefined ? undefined : { "retry-after": retryAfter })

export const serverError = (status = 500): FakeAnswers.Reply => error(status, "server_error", "The server had an error while processing your request.")

export const badRequest = (message = "Invalid request"): FakeAnswers.Reply => error(400, "invalid_request_error", message)

/** A 400 naming the request field it refuses (`param`), as OpenAI's are. */
export const badParam = (param: string, message: string): FakeAnswers.Reply => ({
  status: 400,
  body: { error: { message, type: "invalid_request_error", param, code: null } }
})

/** A streamed reply of exactly these `chat.completion.chunk` objects, then `data: [DONE]`. */
export const sseReply = (chunks: ReadonlyArray<unknown>): FakeAnswers.Reply => ({
  status: 200,
  headers: { "content-type": "text/event-stream" },
  body: chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join("") + "data: [DONE]\n\n"
})

/** One `chat.completion.chunk` with one choice. */
export const chunk = (delta: unknown, finish_reason: string | null = null) => ({
  id: "up",
  object: "chat.completion.chunk",
  created: 1,
  model: "x",
  choices: [{ index: 0, delta, finish_reason }]
})

/**
 * An answer that calls the function `name` (call id `call_1`) with `args`, the arguments in two
 * pieces as OpenAI streams them, then `finish_reason: "tool_calls"` and `usage`.
 */
export const toolCallReply = (
  name: string,
  args: string,
  usage: Usage = { prompt_tokens: 40, completion_tokens: 9 }
): FakeAnswers.Reply => {
  const cut = Math.ceil(args.length / 2)
  return sseReply([
    chunk({ role: "assistant", content: null }),
    chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name, arguments: "" } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(0, cut) } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(cut) } }] }),
    chunk({}, "tool_calls"),
    { id: "up", object: "chat.completion.chunk", created: 1, model: "x", choices: [], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } }
  ])
}

interface Prepared {
  readonly pieces: ReadonlyArray<string>
  /** Each piece as a JSON string literal. */
  readonly piecesJson: ReadonlyArray<string>
  readonly answerJson: string
  readonly finishJson: string
}

// Scripts are immutable values: prepare each once (the default is reused for every request).
const prepared = new WeakMap<Answer, Prepared>()

const prepare = (script: Answer): Prepared => {
  let found = prepared.get(script)
  if (found === undefined) {
    const answer = script.answer ?? defaultAnswer
    const pieces = FakeUpstream.splitAnswer(answer, script.chunks)
    found = {
      pieces,
      piecesJson: pieces.map((piece) => JSON.stringify(piece)),
      answerJson: JSON.stringify(pieces.join("")),
      finishJson: JSON.stringify(script.finishReason ?? "stop")
    }
    prepared.set(script, found)
  }
  return found
}

const usageJson = (usage: Usage) =>
  `{"prompt_tokens":${usage.prompt_tokens},"completion_tokens":${usage.completion_tokens},"total_tokens":${usage.prompt_tokens + usage.completion_tokens}` +
  (usage.prompt_tokens_details === undefined ? "}" : `,"prompt_tokens_details":${JSON.stringify(usage.prompt_tokens_details)}}`)

interface ChatBody {
  readonly model?: unknown
  readonly stream?: unknown
  readonly stream_options?: { readonly include_usage?: unknown }
}

let sequence = 0

const answer = async (script: Answer, request: FakeUpstream.RecordedRequest, exchange: FakeUpstream.Exchange): Promise<void> => {
  const body = (typeof request.body === "object" && request.body !== null ? request.body : {}) as ChatBody
  const model = JSON.stringify(typeof body.model === "string" ? body.model : "fake-model")
  const { answerJson, finishJson, pieces, piecesJson } = prepare(script)
  const placement = script.usagePlacement ?? "final-chunk"
  const usage = script.usage ?? { prompt_tokens: FakeUpstream.promptTokensOf(request.body), completion_tokens: pieces.length }
  const id = `chatcmpl-fake${++sequence}`
  const created = Math.floor(Date.now() / 1000)

  if (!(await FakeAnswers.awaitFirstByte(script, exchange))) return

  if (body.stream !== true) {
    return FakeAnswers.sendWhole(script, exchange, {
      malformed: `{"id":"${id}","object":"chat.completion","choices":[`,
      body: () =>
        `{"id":"${id}","object":"chat.completion","created":${created},"model":${model},"choices":[{"index":0,"message":{"role":"assistant","content":${answerJson}},"logprobs":null,"finish_reason":${finishJson}}]` +
        (placement === "missing" ? "}" : `,"usage":${usageJson(usage)}}`)
    })
  }

  const prefix = `data: {"id":"${id}","object":"chat.completion.chunk","created":${created},"model":${model},"choices":[`
  const includeUsage = body.stream_options?.include_usage === true
  // OpenAI sends `"usage":null` on every chunk when usage was asked for.
  const nullUsage = includeUsage ? `,"usage":null}\n\n` : "}\n\n"
  const inLast = placement === "last-content-chunk" && pieces.length > 0
  return FakeAnswers.sendStream(script, exchange, {
    head: `${prefix}{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]${nullUsage}`,
    pieces: pieces.length,
    piece: (i) =>
      inLast && i === pieces.length - 1
        ? `${prefix}{"index":0,"delta":{"content":${piecesJson[i]}},"finish_reason":${finishJson}}],"usage":${usageJson(usage)}}\n\n`
        : `${prefix}{"index":0,"delta":{"content":${piecesJson[i]}},"finish_reason":null}]${nullUsage}`,
    tail: () => {
      let out = ""
      if (!inLast) {
        out += `${prefix}{"index":0,"delta":{},"finish_reason":${finishJson}}]${nullUsage}`
        if (placement === "final-chunk" && includeUsage) out += `${prefix}],"usage":${usageJson(usage)}}\n\n`
      }
      return script.omitDone ? out : out + "data: [DONE]\n\n"
    },
    malformed: `data: {"id":"${id}","choices":[{"delta":{"content":"unterminated\n\n`
  })
}

interface EmbeddingBody {
  readonly model?: unknown
  readonly input?: unknown
  readonly dimensions?: unknown
  readonly encoding_format?: unknown
}

/** A deterministic vector of `size` for an input: its characters (or token ids) folded in. */
const fakeVector = (input: unknown, size: number): Array<number> => {
  const vector = new Array<number>(size).fill(0)
  const text = typeof input === "string" ? input : JSON.stringify(input)
  for (let i = 0; i < text.length; i++) vector[i % size]! += text.charCodeAt(i) / 1000
  return vector.map((x) => Math.fround(x))
}

const embeddings = (script: Answer, request: FakeUpstream.RecordedRequest, exchange: FakeUpstream.Exchange): void => {
  const body = (typeof request.body === "object" && request.body !== null ? request.body : {}) as EmbeddingBody
  const inputs: ReadonlyArray<unknown> = typeof body.input === "string" || (Array.isArray(body.input) && typeof body.input[0] === "number")
    ? [body.input]
    : Array.isArray(body.input) ? body.input : []
  const size = typeof body.dimensions === "number" ? body.dimensions : 8
  const base64 = body.encoding_format === "base64"
  const data = inputs.map((input, index) => {
    const vector = fakeVector(input, size)
    const bytes = Buffer.alloc(size * 4)
    vector.forEach((x, i) => bytes.writeFloatLE(x, i * 4))
    return { object: "embedding", index, embedding: base64 ? bytes.toString("base64") : vector }
  })
  const prompt = script.usage?.prompt_tokens ??
    inputs.reduce<number>((sum, input) => sum + (typeof input === "string" ? FakeUpstream.estimateTokens(input) : Array.isArray(input) ? input.length : 0), 0)
  exchange.res.writeHead(200, { "content-type": "application/json" })
  exchange.res.end(JSON.stringify({ object: "list", data, model: body.model, usage: { prompt_tokens: prompt, total_tokens: prompt } }))
}

export const start = async (options: Options = {}): Promise<FakeOpenAi> => {
  const server = await FakeUpstream.startProvider<Answer>(options, {
    emptyScript: {},
    route: (method, path) => method === "POST" && (path.endsWith("/chat/completions") || path.endsWith("/embeddings")),
    unauthorized: (apiKey, request) => {
      const sent = request.headers.authorization ?? ""
      return sent === `Bearer ${apiKey}` ? undefined : error(401, "invalid_request_error", `Incorrect API key provided: ${sent.replace(/^Bearer /, "")}.`)
    },
    answer: async (script, request, exchange) =>
      request.path.endsWith("/embeddings") ? embeddings(script, request, exchange) : answer(script, request, exchange)
  })
  return Object.assign(server, { baseUrl: `${server.url}/v1` })
}

/** `start` as a scoped Effect: the server stops when the scope closes. */
export const scoped = (options: Options = {}): Effect.Effect<FakeOpenAi, never, Scope.Scope> => FakeUpstream.scoped(() => start(options))
