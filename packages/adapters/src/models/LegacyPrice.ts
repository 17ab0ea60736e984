/**
 * A catalog file's former price form, still read: `price: {input_per_1k, output_per_1k}` in credits
 * per 1,000 tokens (fractions allowed), which becomes `pricing: {input, output}` in credits per
 * million tokens (decision 0050). A price that is no whole number of credits per million tokens is
 * refused naming its field, not rounded: rounding would change what every call is charged. A model
 * that gives both forms is refused too, since one of them would be silently ignored.
 */
import { Either, ParseResult, Schema } from "effect"

const Price = Schema.Struct({ input_per_1k: Schema.NonNegative, output_per_1k: Schema.NonNegative })
const decodePrice = Schema.decodeUnknownEither(Price, { errors: "all" })

const isRecord = (u: unknown): u is { readonly [key: string]: unknown } => typeof u === "object" && u !== null && !Array.isArray(u)

/** Credits per million tokens for `perThousand` credits per 1,000, when that is a whole number. */
const perMillionOf = (perThousand: number): number | undefined => {
  const perMillion = perThousand * 1000
  const whole = Math.round(perMillion)
  // `0.15 * 1000` may come out a hair off 150 in floating point: that is still 150.
  return Math.abs(perMillion - whole) <= 1e-9 * Math.max(1, whole) ? whole : undefined
}

/** What one model's legacy `price` (at `at`, e.g. `models[1]`) becomes, or what is wrong with it. */
const upgradeModel = (model: { readonly [key: string]: unknown }, at: string): Either.Either<{ readonly [key: string]: unknown }, ReadonlyArray<string>> => {
  if (!("price" in model)) return Either.right(model)
  const { price, ...rest } = model
  if ("pricing" in model) {
    return Either.left([`${at}: give "pricing" (credits per million tokens) or the older "price" (per 1,000), not both`])
  }
  const decoded = decodePrice(price)
  if (Either.isLeft(decoded)) {
    return Either.left(ParseResult.ArrayFormatter.formatErrorSync(decoded.left).map((issue) =>
      `${at}.price${issue.path.map((key) => `.${String(key)}`).join("")}: ${issue.message}`
    ))
  }
  const problems: Array<string> = []
  const convert = (field: "input_per_1k" | "output_per_1k"): number => {
    const perThousand = decoded.right[field]
    const perMillion = perMillionOf(perThousand)
    if (perMillion === undefined) {
      problems.push(
        `${at}.price.${field}: ${perThousand} credits per 1,000 tokens is ${perThousand * 1000} per million, not a whole number; give "pricing" in whole credits per million tokens`
      )
    }
    return perMillion ?? 0
  }
  const pricing = { input: convert("input_per_1k"), output: convert("output_per_1k") }
  return problems.length > 0 ? Either.left(problems) : Either.right({ ...rest, pricing })
}

/**
 * The catalog JSON with every model's legacy `price` turned into `pricing`, and the problems
 * found doing so (each naming its field). A model with a problem keeps a placeholder `pricing`,
 * so that the catalog's own check still reports the file's other problems alongside.
 */
export const upgrade = (json: unknown): { readonly json: unknown; readonly problems: ReadonlyArray<string> } => {
  if (!isRecord(json) || !Array.isArray(json.models)) return { json, problems: [] }
  const problems: Array<string> = []
  const models = json.models.map((model: unknown, index) => {
    if (!isRecord(model)) return model
    const upgraded = upgradeModel(model, `models[${index}]`)
    if (Either.isRight(upgraded)) return upgraded.right
    problems.push(...upgraded.left)
    const { price: _price, ...rest } = model
    return { ...rest, pricing: { input: 0, output: 0 } }
  })
  return { json: { ...json, models }, problems }
}
