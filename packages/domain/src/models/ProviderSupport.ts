/**
 * Which Chat Completions options each kind of provider can honour: the one place that decides
 * whether a request's options may go to a model (docs/models.md has the same table for people).
 *
 * - `openai-compatible` servers take every option as it is.
 * - `anthropic` translates `stop` (to `stop_sequences`), `top_p`, `user`/`safety_identifier`
 *   (to `metadata.user_id`); an option with no Anthropic equivalent is accepted only at its
 *   neutral value (which changes nothing, so nothing is lost by not sending it).
 *   Tools, `tool_choice`, `parallel_tool_calls` and `response_format` are translated too, except
 *   a `json_schema` response format beside `tools` (it becomes a forced tool of its own).
 * - `offline` applies `stop`, tools and `response_format`, and accepts what cannot change a
 *   deterministic answer (sampling, identifiers, hints); penalties and logit biases would change
 *   it, so only their neutral values.
 * - A Messages API request (`CallOptions.anthropic`) goes to `anthropic` providers as it was sent;
 *   the others take its translation, unless it uses what only Anthropic has (its `unportable`).
 * - For both, a `tool_choice` that needs a tool the request does not define is refused (OpenAI
 *   refuses it too; an OpenAI-compatible server gives its own answer).
 *
 * A council (`council`, `council-<tier>`) is not one provider but a protocol over several: its
 * calls carry its own round prompts, so `councilRefusalOf` says which options it can honour.
 *
 * ```ts
 * refusalOf("anthropic", { seed: 7 }) // { param: "seed", message: "…" }
 * councilRefusalOf({ tools: [weather] }) // { param: "tools", message: "…" }
 * ```
 */
import type { CallOptions, Refusal } from "./Model.js"

export type { Refusal }

export type ProviderKind = "openai-compatible" | "anthropic" | "offline"

const stopsOf = (stop: CallOptions["stop"]): ReadonlyArray<string> =>
  stop === undefined ? [] : typeof stop === "string" ? [stop] : stop

const hasBias = (bias: CallOptions["logit_bias"]) => bias !== undefined && Object.keys(bias).length > 0

const notFor = (param: string, provider: string, why: string): Refusal => ({
  param,
  message: `\`${param}\` is not supported by ${provider} models: ${why}`
})

/** What the provider kind cannot honour in `options` (the first such parameter), if anything. */
export const refusalOf = (kind: ProviderKind, options: CallOptions | undefined): Refusal | undefined => {
  // A Messages API request goes to Anthropic as it was sent: nothing of it is translated.
  if (options?.anthropic !== undefined && kind === "anthropic") return undefined
  // What only Anthropic can honour goes to Anthropic alone.
  if (options?.anthropic !== undefined) {
    const unportable = options.anthropic.unportable.find((refusal) => kind !== "offline" || refusal.offline !== true)
    if (unportable !== undefined) return { param: unportable.param, message: unportable.message }
  }
  if (options === undefined || kind === "openai-compatible") return undefined
  const provider = kind === "anthropic" ? "Anthropic" : "the offline"
  // Zero penalties and an empty bias are the defaults: nothing to apply.
  if (options.presence_penalty !== undefined && options.presence_penalty !== 0) {
    return notFor("presence_penalty", provider, "only 0 can be honoured")
  }
  if (options.frequency_penalty !== undefined && options.frequency_penalty !== 0) {
    return notFor("frequency_penalty", provider, "only 0 can be honoured")
  }
  if (hasBias(options.logit_bias)) return notFor("logit_bias", provider, "only an empty bias can be honoured")
  const choice = options.tool_choice
  const tools = options.tools ?? []
  if (choice === "required" && tools.length === 0) {
    return { param: "tool_choice", message: "`tool_choice: \"required\"` needs at least one tool in `tools`" }
  }
  if (typeof choice === "object" && !tools.some((tool) => tool.function.name === choice.function.name)) {
    return { param: "tool_choice", message: `\`tool_choice\` names the tool \`${choice.function.name}\`, which is not in \`tools\`` }
  }
  if (kind === "offline") return undefined
  if (options.response_format?.type === "json_schema" && tools.length > 0) {
    return notFor("response_format", provider, "a `json_schema` format is translated into a forced tool, which cannot be combined with `tools`")
  }
  if (options.seed !== undefined) return notFor("seed", provider, "the Messages API has no seed")
  if (options.reasoning_effort !== undefined && options.reasoning_effort !== "none") {
    return notFor("reasoning_effort", provider, "extended thinking is not translated; only \"none\" can be honoured")
  }
  if (options.verbosity !== undefined && options.verbosity !== "medium") {
    return notFor("verbosity", provider, "only \"medium\" can be honoured")
  }
  if (options.prompt_cache_key !== undefined) {
    return notFor("prompt_cache_key", provider, "Anthropic caches by `cache_control` blocks, not by key")
  }
  if (stopsOf(options.stop).some((stop) => stop.trim().length === 0)) {
    return notFor("stop", provider, "Anthropic refuses a stop sequence of only whitespace")
  }
  return undefined
}

const notForCouncil = (param: string, why: string): Refusal => ({
  param,
  message: `\`${param}\` is not supported by a council: ${why}`
})

/**
 * What a council cannot honour in `options` (the first such parameter), if anything. Its answer
 * is a consensus in prose written over four rounds of its own prompts: a tool, a response format,
 * stop sequences or sampling controls beyond the temperature have no one call to apply to, so
 * only their neutral values pass. Identifiers and hints that cannot change an answer (`user`,
 * `safety_identifier`, `prompt_cache_key`, the standard `service_tier`, `parallel_tool_calls`)
 * are accepted; the temperature and the output cap are the caller's to apply.
 */
export const councilRefusalOf = (options: CallOptions | undefined): Refusal | undefined => {
  if (options === undefined) return undefined
  if ((options.tools?.length ?? 0) > 0) {
    return notForCouncil("tools", "its participants answer in prose and no tool call can be agreed on; use a model or a tier")
  }
  const choice = options.tool_choice
  if (choice !== undefined && choice !== "none" && choice !== "auto") {
    return notForCouncil("tool_choice", "a council calls no tools")
  }
  if (options.response_format !== undefined && options.response_format.type !== "text") {
    return notForCouncil("response_format", "its answer is the consensus in prose; use a model or a tier for structured output")
  }
  if (stopsOf(options.stop).length > 0) return notForCouncil("stop", "a stop sequence would cut the council's own rounds, not the consensus")
  if (options.seed !== undefined) return notForCouncil("seed", "its answer comes from several models over several rounds; no seed reproduces it")
  if (options.top_p !== undefined && options.top_p !== 1) return notForCouncil("top_p", "only 1 can be honoured; use `temperature`")
  if (options.presence_penalty !== undefined && options.presence_penalty !== 0) {
    return notForCouncil("presence_penalty", "only 0 can be honoured")
  }
  if (options.frequency_penalty !== undefined && options.frequency_penalty !== 0) {
    return notForCouncil("frequency_penalty", "only 0 can be honoured")
  }
  if (hasBias(options.logit_bias)) return notForCouncil("logit_bias", "token ids differ between its models; only an empty bias can be honoured")
  if (options.reasoning_effort !== undefined) {
    return notForCouncil("reasoning_effort", "its models differ in how they reason; it is not sent to them")
  }
  if (options.verbosity !== undefined && options.verbosity !== "medium") return notForCouncil("verbosity", "only \"medium\" can be honoured")
  return undefined
}
