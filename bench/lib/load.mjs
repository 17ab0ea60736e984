/**
 * The two ways the benchmark sends requests: under load (autocannon, N connections for a fixed
 * time) and unloaded (one request at a time over one keep-alive connection, timed with
 * `process.hrtime.bigint()`), plus a check that each target answers in OpenAI's shape.
 */
import autocannon from "autocannon"
import { Pool } from "undici"

export const path = "/v1/chat/completions"

const messages = [
  { role: "system", content: "You are a concise assistant." },
  { role: "user", content: "Count from one to twenty, one word per number." }
]

export const bodies = {
  nonstream: JSON.stringify({ model: "bench-standard", messages, max_tokens: 64 }),
  stream: JSON.stringify({ model: "bench-standard", messages, max_tokens: 64, stream: true, stream_options: { include_usage: true } })
}

/** A target may add headers of its own (`target.headers`: a caller's `traceparent`, say). */
const headersFor = (key, extra) => ({ "content-type": "application/json", authorization: `Bearer ${key}`, ...extra })

/** Percentile of a sorted array (nearest rank). */
export const percentile = (sorted, p) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))])

/**
 * One load run: `connections` connections for `seconds`. Latencies are taken from autocannon's
 * per-response event (fractional milliseconds; its own histogram keeps whole milliseconds).
 * With several keys, connection i uses key i mod keys. A target of several instances
 * (`target.urls`) gets its connections dealt round-robin, one autocannon per instance, all at
 * once; their figures are summed (latencies pooled).
 */
export const run = async (target, mode, { connections, seconds, body, rate }) => {
  if (!target.urls || target.urls.length === 1) return runOne(target, mode, { connections, seconds, body, rate })
  const share = (i) => Math.floor(connections / target.urls.length) + (i < connections % target.urls.length ? 1 : 0)
  const parts = await Promise.all(target.urls.map((url, i) => runOne({ ...target, url }, mode, { connections: share(i), seconds, body, raw: true })))
  const latencies = parts.flatMap((p) => p.latencies).sort((a, b) => a - b)
  const sum = (f) => parts.reduce((a, p) => a + f(p), 0)
  const seconds_ = Math.max(...parts.map((p) => p.seconds))
  const statusCodes = {}
  for (const p of parts) for (const [code, stat] of Object.entries(p.statusCodes ?? {})) statusCodes[code] = { count: (statusCodes[code]?.count ?? 0) + stat.count }
  return {
    target: target.name,
    mode,
    seconds: seconds_,
    ok: sum((p) => p.ok),
    non2xx: sum((p) => p.non2xx),
    errors: sum((p) => p.errors),
    timeouts: sum((p) => p.timeouts),
    statusCodes,
    rps: sum((p) => p.ok) / seconds_,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    bytesPerResponse: sum((p) => p.bytesPerResponse * (p.ok + p.non2xx)) / Math.max(1, sum((p) => p.ok + p.non2xx))
  }
}

const runOne = (target, mode, { connections, seconds, body, raw, rate }) =>
  new Promise((resolve, reject) => {
    const latencies = []
    let next = 0
    const instance = autocannon(
      {
        url: `${target.url}${path}`,
        method: "POST",
        headers: headersFor(target.keys[0], target.headers),
        body: body ?? bodies[mode],
        connections,
        pipelining: 1,
        duration: seconds,
        timeout: 30,
        // A fixed offered rate (requests a second over all connections) rather than as fast as answered.
        ...(rate === undefined ? {} : { overallRate: rate }),
        setupClient: target.keys.length > 1 ? (client) => client.setHeaders(headersFor(target.keys[next++ % target.keys.length], target.headers)) : undefined
      },
      (error, result) => {
        if (error) return reject(error)
        latencies.sort((a, b) => a - b)
        resolve({
          target: target.name,
          mode,
          seconds: result.duration,
          ok: result["2xx"],
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
          statusCodes: result.statusCodeStats,
          rps: result["2xx"] / result.duration,
          p50: percentile(latencies, 50),
          p99: percentile(latencies, 99),
          bytesPerResponse: result.throughput.total / Math.max(1, result.requests.total),
          ...(raw ? { latencies } : {})
        })
      }
    )
    instance.on("response", (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime)
    })
  })

/** autocannon as it is, for a quick run whose raw result is enough. */
export const plain = (options) =>
  new Promise((resolve, reject) => autocannon({ pipelining: 1, timeout: 30, ...options }, (error, result) => (error ? reject(error) : resolve(result))))

const ns = (from, to) => Number(to - from) / 1e6

/** An unloaded prober: one keep-alive connection per target. */
export const prober = (targets) => {
  const pools = new Map(targets.map((t) => [t.name, new Pool(t.url, { connections: 1, pipelining: 1, keepAliveTimeout: 60_000 })]))
  const once = async (target, mode) => {
    const pool = pools.get(target.name)
    const t0 = process.hrtime.bigint()
    const { body, statusCode } = await pool.request({ method: "POST", path, headers: headersFor(target.keys[0]), body: bodies[mode] })
    const tHeaders = process.hrtime.bigint()
    let tFirst
    let tToken
    for await (const chunk of body) {
      if (tFirst === undefined) tFirst = process.hrtime.bigint()
      if (tToken === undefined && mode === "stream" && chunk.includes('"content":"one')) tToken = process.hrtime.bigint()
    }
    const tEnd = process.hrtime.bigint()
    if (statusCode !== 200) throw new Error(`${target.name} ${mode}: status ${statusCode} in the unloaded probe`)
    return { total: ns(t0, tEnd), headers: ns(t0, tHeaders), firstByte: ns(t0, tFirst ?? tEnd), firstToken: tToken === undefined ? undefined : ns(t0, tToken) }
  }
  return { once, close: () => Promise.all([...pools.values()].map((pool) => pool.close())) }
}

/**
 * The paced model: behind it the fake upstream waits before each piece of its answer
 * (bench/upstream.mjs), so that the pieces leave it one by one and a gap between them can be
 * measured. Huddle's catalog serves it as `bench-paced` too.
 */
export const pacedModel = "bench-paced"
const pacedBody = JSON.stringify({ model: pacedModel, messages, max_tokens: 64, stream: true, stream_options: { include_usage: true } })

/** An SSE event that carries a piece of the answer. */
const contentEvent = /"content":"[^"]/

/**
 * A prober of the gaps between streamed pieces, as a client sees them: one paced stream at a
 * time over one keep-alive connection per target; the time of each event that carries content
 * is the time of the read that completed it (events that arrive in one read are 0 apart). Returns
 * the gaps between consecutive content events, in ms.
 */
export const gapProber = (targets) => {
  const pools = new Map(targets.map((t) => [t.name, new Pool(t.url, { connections: 1, pipelining: 1, keepAliveTimeout: 60_000 })]))
  const once = async (target) => {
    const { body, statusCode } = await pools.get(target.name).request({ method: "POST", path, headers: headersFor(target.keys[0]), body: pacedBody })
    const times = []
    let pending = ""
    for await (const chunk of body) {
      const now = process.hrtime.bigint()
      pending += chunk.toString("utf8")
      let end
      while ((end = pending.indexOf("\n\n")) >= 0) {
        if (contentEvent.test(pending.slice(0, end))) times.push(now)
        pending = pending.slice(end + 2)
      }
    }
    if (statusCode !== 200) throw new Error(`${target.name}: status ${statusCode} for a paced stream`)
    if (times.length < 2) throw new Error(`${target.name}: a paced stream carried ${times.length} content events`)
    return times.slice(1).map((t, i) => ns(times[i], t))
  }
  return { once, close: () => Promise.all([...pools.values()].map((pool) => pool.close())) }
}

/** Checks that a target answers both modes in OpenAI's shapes with the fake's answer and usage. */
export const validate = async (target, expected) => {
  const post = async (mode) => {
    const res = await fetch(`${target.url}${path}`, { method: "POST", headers: headersFor(target.keys[0]), body: bodies[mode], signal: AbortSignal.timeout(30_000) })
    return { status: res.status, type: res.headers.get("content-type") ?? "", text: await res.text() }
  }
  const problems = []
  const plain = await post("nonstream")
  if (plain.status !== 200) {
    problems.push(`non-streaming: status ${plain.status}: ${plain.text.slice(0, 300)}`)
  } else {
    const json = JSON.parse(plain.text)
    if (json.object !== "chat.completion") problems.push(`non-streaming: object ${json.object}`)
    if (json.choices?.[0]?.message?.content !== expected.answer) problems.push(`non-streaming: content ${JSON.stringify(json.choices?.[0]?.message?.content)?.slice(0, 120)}`)
    if (json.usage?.completion_tokens !== expected.usage.completion_tokens) problems.push(`non-streaming: usage ${JSON.stringify(json.usage)}`)
  }
  const streamed = await post("stream")
  const info = {}
  if (streamed.status !== 200) {
    problems.push(`streaming: status ${streamed.status}: ${streamed.text.slice(0, 300)}`)
  } else {
    if (!streamed.type.startsWith("text/event-stream")) problems.push(`streaming: content-type ${streamed.type}`)
    const data = streamed.text.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trim())
    if (data.at(-1) !== "[DONE]") problems.push("streaming: does not end with data: [DONE]")
    const chunks = data.filter((d) => d !== "[DONE]").map((d) => JSON.parse(d))
    const content = chunks.map((c) => c.choices?.[0]?.delta?.content ?? "").join("")
    const contentChunks = chunks.filter((c) => (c.choices?.[0]?.delta?.content ?? "") !== "").length
    const usage = chunks.find((c) => c.usage)?.usage
    if (content !== expected.answer) problems.push(`streaming: content ${JSON.stringify(content).slice(0, 120)}`)
    if (usage?.completion_tokens !== expected.usage.completion_tokens) problems.push(`streaming: usage ${JSON.stringify(usage)}`)
    if (chunks.some((c) => c.object !== "chat.completion.chunk")) problems.push("streaming: a chunk is not chat.completion.chunk")
    info.events = data.length
    info.contentChunks = contentChunks
    info.bytes = streamed.text.length
  }
  return { problems, info }
}
