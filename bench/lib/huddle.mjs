/**
 * Huddle under test: its catalog, its environment, and the accounts a benchmark runs as, made
 * through the public API as a customer would (an org with an enforced policy, an org memory, a
 * credit pool, members with org-bound API keys).
 */
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { usage } from "./answer.mjs"

export const model = "bench-standard"

/** Every model's prices, in credits per million tokens. */
export const pricing = { input: 1000, output: 2000 }

/** What one answer of the fake upstream costs (its usage at `pricing`, rounded up once as Huddle does). */
export const costPerAnswer = Math.ceil((usage.prompt_tokens * pricing.input + usage.completion_tokens * pricing.output) / 1_000_000)

/**
 * One model per tier, all served by the fake upstream through the `openai` provider, and
 * `bench-paced` (standard), whose upstream streams its pieces apart (the chunk-gap probe).
 */
export const writeCatalog = (dir) => {
  const entry = (id, tier) => ({ id, tier, provider: "openai", upstream_model: `${id}-upstream`, pricing, context_window: 16_000, max_output_tokens: 1024 })
  const path = join(dir, "catalog.json")
  writeFileSync(path, JSON.stringify({ models: [entry("bench-economy", "economy"), entry(model, "standard"), entry("bench-premium", "premium"), entry("bench-paced", "standard")] }, null, 2))
  return path
}

/**
 * How `npm start` runs Huddle, read from the root package.json's `start` script so that the
 * benchmark runs what an operator runs: the environment's defaults it sets (`NAME=${NAME:-value}`,
 * applied where `env` has no value) and the node flags before the server's main module.
 */
export const startCommand = (root) => {
  const script = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).scripts.start
  const tokens = script.trim().split(/\s+/)
  const at = tokens.indexOf("node")
  const defaults = tokens.slice(0, at).map((token) => {
    const match = /^(\w+)=\$\{(\w+):-([^}]*)\}$/.exec(token)
    if (match === null || match[1] !== match[2]) throw new Error(`npm start: ${token} is not NAME=\${NAME:-value}`)
    return [match[1], match[3]]
  })
  if (at < 0 || tokens.at(-1) !== "packages/server/dist/main.js") throw new Error(`npm start is not "node … packages/server/dist/main.js": ${script}`)
  return {
    nodeArgs: tokens.slice(at + 1, -1),
    withDefaults: (env) => ({ ...env, ...Object.fromEntries(defaults.filter(([name]) => !env[name])) })
  }
}

/** The environment of `node packages/server/dist/main.js`: nothing inherited that could reach outside. */
/**
 * Rate limits stay on (every request is counted against its API key) but high enough never to
 * answer 429 in a benchmark: 10^6 a minute (the most a limit may be). Their counters are in memory unless `redisUrl` is
 * given (a Redis on loopback, as a deployment of several instances would use).
 */
/** The operator token of the benchmark's servers (loopback only), which mints the org's pool. */
export const operatorToken = `bench-operator-${process.pid}-${"x".repeat(32)}`

/**
 * The environment of a Huddle under test. `observability`: `on` (the default: metrics recorded
 * and readable with the operator token; traces exported to `otlpUrl` when given, `traceRatio` of
 * them, default all) or `off`
 * (`HUDDLE_METRICS=off`, no trace export).
 */
export const serverEnv = ({ port, databaseUrl, dataDir, catalogPath, upstreamBaseUrl, upstreamKey, starterCredits, redisUrl, otlpUrl, traceRatio = 1, observability = "on" }) => {
  const env = { ...process.env }
  for (const name of Object.keys(env)) {
    if (/^(DATABASE_URL|REDIS_URL|OPENAI_|ANTHROPIC_|HUDDLE_|OTEL_|PG[A-Z]+$|LOG_LEVEL$)/.test(name)) delete env[name]
  }
  return {
    ...env,
    HOST: "127.0.0.1",
    PORT: String(port),
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : { HUDDLE_DATA_DIR: dataDir }),
    HUDDLE_CATALOG: catalogPath,
    HUDDLE_STARTER_CREDITS: String(starterCredits),
    HUDDLE_SHUTDOWN_GRACE: "2 seconds",
    HUDDLE_OPERATOR_TOKEN: operatorToken,
    OPENAI_API_KEY: upstreamKey,
    OPENAI_BASE_URL: upstreamBaseUrl,
    HUDDLE_RATE_CHAT: "1000000",
    HUDDLE_RATE_READ: "1000000",
    HUDDLE_RATE_INTENT: "1000000",
    // The sign-in throttles count per address, and every bench client is 127.0.0.1.
    HUDDLE_SIGNUPS_PER_ADDRESS: "1000000",
    HUDDLE_SIGNIN_FAILURES_PER_ADDRESS: "1000000",
    ...(redisUrl ? { REDIS_URL: redisUrl, HUDDLE_RATE_LIMIT_PREFIX: `huddle-bench-${process.pid}-${port}:` } : {}),
    ...(observability === "off"
      ? { HUDDLE_METRICS: "off" }
      : otlpUrl
      ? { OTEL_EXPORTER_OTLP_ENDPOINT: otlpUrl, OTEL_SERVICE_NAME: `huddle-bench-${port}`, OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: String(traceRatio) }
      : {}),
    LOG_LEVEL: "Info"
  }
}

const call = async (url, method, path, { body, token } = {}, expected) => {
  const headers = {}
  if (token) headers.authorization = `Bearer ${token}`
  if (body !== undefined) headers["content-type"] = "application/json"
  const res = await fetch(`${url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(30_000) })
  const text = await res.text()
  if (expected !== undefined && res.status !== expected) throw new Error(`${method} ${path}: expected ${expected}, got ${res.status}: ${text.slice(0, 500)}`)
  return text.length > 0 ? JSON.parse(text) : undefined
}

let counter = 0
const newUser = async (url, label) => {
  const email = `${label}-${process.pid}-${++counter}-${Date.now().toString(36)}@bench.example.com`
  const password = `bench-password-${counter}-${Math.random().toString(36).slice(2)}`
  await call(url, "POST", "/v1/auth/signup", { body: { email, password } }, 201)
  const login = await call(url, "POST", "/v1/auth/login", { body: { email, password } }, 200)
  return { email, password, session: login.token }
}

/**
 * An org with an enforced policy (tier ≤ standard, org pool as fallback), an org memory, a
 * credit pool, and `keys` members, each with an API key bound to the org. Returns the keys.
 * `personalCredits`: granted to each member's own balance, which pays first (`--payer personal`);
 * the servers start every new user at 0, so a pool drained later is paid by its org alone.
 */
export const setup = async (url, { keys, orgCredits, personalCredits = 0 }) => {
  const admin = await newUser(url, "admin")
  const org = await call(url, "POST", "/v1/orgs", { token: admin.session, body: { name: "Bench Org" } }, 201)
  await call(url, "PUT", `/v1/orgs/${org.id}/admin/policies`, { token: admin.session, body: { model_tier: "standard", credit_fallback: true } }, 200)
  await call(url, "POST", "/v1/operator/credits/grants", { token: operatorToken, body: { org_id: org.id, balance: "subscription", amount: orgCredits, reason: "benchmark" } }, 201)
  await call(url, "POST", "/v1/memories", { token: admin.session, body: { scope: "org", org_id: org.id, content: "Answers are short and in British English." } }, 201)
  const apiKeys = []
  for (let i = 0; i < keys; i++) {
    const member = await newUser(url, "member")
    await call(url, "POST", `/v1/orgs/${org.id}/admin/members/invite`, { token: admin.session, body: { email: member.email, role: "member" } }, 201)
    // Logging in again activates the membership.
    const login = await call(url, "POST", "/v1/auth/login", { body: { email: member.email, password: member.password } }, 200)
    const key = await call(url, "POST", "/v1/api-keys", { token: login.token, body: { name: `bench-${i}`, org_id: org.id } }, 201)
    if (personalCredits > 0) {
      const me = await call(url, "GET", "/v1/me", { token: login.token }, 200)
      await call(url, "POST", "/v1/operator/credits/grants", { token: operatorToken, body: { user_id: me.user.id, amount: personalCredits, reason: "benchmark" } }, 201)
    }
    apiKeys.push(key.key)
  }
  return { orgId: org.id, adminSession: admin.session, apiKeys }
}

export const orgCredits = (url, orgId, session) => call(url, "GET", `/v1/orgs/${orgId}/credits`, { token: session }, 200)
