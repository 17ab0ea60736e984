/**
 * The fake OpenAI-compatible upstream of the benchmark, in a process of its own: the testkit's
 * FakeOpenAi (real node:http on loopback) answering every chat completion with the same
 * 20-token answer. Non-streaming: one `chat.completion` JSON. Streaming: a role chunk, 20 content
 * chunks, a finish chunk, the usage chunk (`stream_options.include_usage`) and `data: [DONE]`.
 * Nothing is recorded (`recordRequests: false`), so its memory stays flat. A model whose name
 * says `paced` is answered the same way, but the stream waits BENCH_UPSTREAM_CHUNK_MS (default 2)
 * before each piece: the chunk-gap probe of bench/run.mjs.
 *
 * Prints one JSON line `{"ready":true,"url":...}` on stdout, then serves until SIGTERM.
 */
import * as FakeOpenAi from "@huddle/testkit/FakeOpenAi"
import { answer, chunks, usage } from "./lib/answer.mjs"

const apiKey = process.env.BENCH_UPSTREAM_KEY ?? "sk-bench-upstream"
// The profile (bench/profile.mjs) varies the number of streamed pieces to price one chunk.
const pieces = process.env.BENCH_UPSTREAM_CHUNKS ? Number(process.env.BENCH_UPSTREAM_CHUNKS) : chunks
const fake = await FakeOpenAi.start({ apiKey, recordRequests: false, defaultScript: { answer, chunks: pieces, usage } })
const paced = { answer, chunks: pieces, usage, chunkDelayMs: Number(process.env.BENCH_UPSTREAM_CHUNK_MS ?? 2) }
fake.respondWith((request) => (String(request.body?.model ?? "").includes("paced") ? paced : undefined))
process.stdout.write(`${JSON.stringify({ ready: true, url: fake.url, baseUrl: fake.baseUrl, pid: process.pid })}\n`)

const stop = () => {
  fake.stop().then(() => process.exit(0), () => process.exit(1))
  setTimeout(() => process.exit(0), 2000).unref()
}
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
