#!/usr/bin/env node
/**
 * The operator's command line, run on the server with the server's environment (`DATABASE_URL`
 * or `HUDDLE_DATA_DIR`): the same domain services as the operator API, never raw SQL.
 *
 *   npm run huddle -- grant --user ada@example.com --amount 5000 --reason "invoice 42"
 *
 * With the embedded database (no DATABASE_URL), stop the server first: one process at a time
 * may open a PGlite data directory. Prints JSON on stdout; errors on stderr, exit code 1 (2 for
 * a usage error).
 */
import { parseArgs } from "node:util"
import * as Engine from "@huddle/adapters/Engine"
import * as Database from "@huddle/adapters/sql/Database"
import { Operator, type Service as OperatorService } from "@huddle/domain/operator/Operator"
import { Email, Password } from "@huddle/domain/identity/User"
import { ConfigError, Effect, Layer, Logger, LogLevel, Option, ParseResult, Schema } from "effect"
import { GrantRequest } from "../operator/OperatorApi.js"
import * as ServerConfig from "../ServerConfig.js"

const usage = `usage: huddle <command> [options]

commands:
  migrate                                   apply pending database migrations
  grant   --user <id|email> | --org <id> --balance subscription|addon
          --amount <credits> --reason <text>
                                            mint credits (a ledger row and an audit event)
  ledger  --user <id|email> | --org <id> --balance subscription|addon [--limit <n>]
                                            an account's ledger, newest first, and its balance
  create-user --email <email> --password-stdin
                                            create a user (the password is read from standard input)
  revoke-keys --user <id|email>             revoke every API key of a user
  password-reset --user <id|email>          issue a one-time password-reset token (shown once, valid 24 h)
                                            for the user to redeem at POST /v1/auth/password/reset

The database is the server's: DATABASE_URL, or the embedded one in HUDDLE_DATA_DIR (default .huddle).`

class UsageError extends Error {}

const { positionals, values } = (() => {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        user: { type: "string" },
        org: { type: "string" },
        balance: { type: "string" },
        amount: { type: "string" },
        reason: { type: "string" },
        limit: { type: "string" },
        email: { type: "string" },
        "password-stdin": { type: "boolean" },
        help: { type: "boolean", short: "h" }
      }
    })
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${usage}`)
    process.exit(2)
  }
})()

const readStdin = Effect.promise(async () => {
  const chunks: Array<Buffer> = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString("utf8").replace(/\r?\n$/, "")
})

/** The option each field of a request comes from, to name it when it is refused. */
const optionOf: Readonly<Record<string, string>> = {
  user_id: "--user",
  org_id: "--org",
  balance: "--balance",
  amount: "--amount",
  reason: "--reason"
}

/**
 * Decodes what the options gave; a refusal names the option each problem is about: `source`
 * for a single value (`--limit`), the field's option for a request's fields.
 */
const decode = <A, I>(schema: Schema.Schema<A, I>, input: unknown, source?: string) =>
  Schema.decodeUnknown(schema)(input).pipe(
    Effect.mapError((error) =>
      new UsageError(
        ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => {
          const key = issue.path[0]
          const option = source ?? (key === undefined ? undefined : optionOf[String(key)] ?? String(key))
          // An option left out reaches the schema as `undefined`.
          const message = /^Expected .*, actual undefined$/.test(issue.message) ? "is missing" : issue.message
          return option === undefined ? message : `${option}: ${message}`
        }).join("; ")
      )
    )
  )

/** `--user` may be an email: the operator service resolves it to the user's id. */
const target = (operator: OperatorService) =>
  Effect.gen(function*() {
    if (values.user !== undefined) {
      if (values.org !== undefined) return yield* Effect.fail(new UsageError("give --user or --org, not both"))
      const user = yield* operator.findUser(values.user)
      return { user_id: user.id as string }
    }
    if (values.org !== undefined) {
      const balance = values.balance
      if (balance !== "subscription" && balance !== "addon") {
        return yield* Effect.fail(new UsageError("give --balance subscription or --balance addon with --org"))
      }
      return { org_id: values.org, balance } as const
    }
    return yield* Effect.fail(new UsageError("give --user <id|email>, or --org <id> with --balance"))
  })

const integer = (value: string | undefined) => (value === undefined || !/^-?\d+$/.test(value) ? value : Number(value))

const command = Effect.gen(function*() {
  const operator = yield* Operator
  switch (positionals[0]) {
    case "migrate":
      // Building the engine applied them.
      return { migrated: true }
    case "grant": {
      const request = yield* decode(GrantRequest, { ...(yield* target(operator)), amount: integer(values.amount), reason: values.reason })
      const target_ = request.user_id !== undefined
        ? { user_id: request.user_id }
        : { org_id: request.org_id!, balance: request.balance! }
      return yield* operator.grant({ target: target_, amount: request.amount, reason: request.reason }, "cli")
    }
    case "ledger": {
      const limit = yield* decode(Schema.Int.pipe(Schema.between(1, 1000)), integer(values.limit ?? "50"), "--limit")
      return yield* operator.ledger(yield* target(operator), { limit })
    }
    case "create-user": {
      if (!values["password-stdin"]) return yield* Effect.fail(new UsageError("give --password-stdin and the password on standard input"))
      const email = yield* decode(Email, values.email?.trim().toLowerCase(), "--email")
      const password = yield* decode(Password, yield* readStdin, "the password on standard input")
      return yield* operator.createUser({ email, password })
    }
    case "revoke-keys": {
      if (values.user === undefined) return yield* Effect.fail(new UsageError("give --user <id|email>"))
      return { revoked: yield* operator.revokeKeys(values.user, "cli") }
    }
    case "password-reset": {
      if (values.user === undefined) return yield* Effect.fail(new UsageError("give --user <id|email>"))
      return yield* operator.issuePasswordReset(values.user, "cli")
    }
    default:
      return yield* Effect.fail(new UsageError(positionals[0] === undefined ? "no command" : `unknown command: ${positionals[0]}`))
  }
})

if (values.help) {
  console.log(usage)
  process.exit(0)
}

const program = Effect.gen(function*() {
  const config = yield* ServerConfig.fromEnv
  yield* Effect.logDebug("opening storage").pipe(Effect.annotateLogs("storage", Database.describe(config.engine)))
  return yield* command.pipe(
    Effect.provide(Engine.layer({ storage: config.engine, starterCredits: config.starterCredits, providers: {}, catalog: {} }).pipe(Layer.orDie))
  )
})

program.pipe(
  Effect.provide(Logger.json),
  Logger.withMinimumLogLevel(LogLevel.Warning),
  Effect.runPromiseExit
).then((exit) => {
  if (exit._tag === "Success") {
    console.log(JSON.stringify(exit.value, null, 2))
    return process.exit(0)
  }
  const failure = exit.cause._tag === "Fail" ? Option.some(exit.cause.error) : Option.none()
  if (Option.isSome(failure)) {
    const error = failure.value as { readonly _tag?: string; readonly message?: string }
    if (error instanceof UsageError) {
      console.error(`${error.message}\n\n${usage}`)
      return process.exit(2)
    }
    // A refused configuration names its variables, as the server's start-up log does.
    console.error(ConfigError.isConfigError(error) ? ServerConfig.describeConfigError(error) : error.message ?? String(error))
    return process.exit(1)
  }
  console.error(`huddle: ${exit.cause.toString().split("\n")[0]}`)
  process.exit(1)
})
