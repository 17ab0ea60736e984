/**
 * Valid payloads from a contract schema, for the fuzzer, whose generation always ends.
 *
 * `Arbitrary.make` derives a custom `Schema.filter` by rejection sampling (fast-check's
 * `.filter`): it draws values until one passes, with no bound. For a filter that random values
 * almost never pass (`n === 1` on a number, `type === "text"` on a content part's string) that
 * loop never ends; it runs inside one synchronous `generate`, so it pegs the event loop and no
 * test timeout can fire. Here every custom filter gets a fixed number of draws and keeps the
 * first value that passes, or else the first one drawn: an invalid value, which the encoding in
 * `validPayload` refuses (the payload is then `{}`). Built-in refinements (`minLength`,
 * `between`, `pattern`, …) are left to Effect, which turns them into fast-check constraints.
 */
import { Arbitrary, FastCheck, Option, Schema, SchemaAST as AST } from "effect"

/** Draws for a custom filter before giving up on it. */
export const attempts = 32

/** Draws until `passes` holds, as `.filter` does, but `attempts` times at most; then the first. */
class BoundedFilter<A> extends FastCheck.Arbitrary<A> {
  constructor(readonly arbitrary: FastCheck.Arbitrary<A>, readonly passes: (value: A) => boolean) {
    super()
  }
  generate(random: FastCheck.Random, biasFactor: number | undefined): FastCheck.Value<A> {
    const first = this.arbitrary.generate(random, biasFactor)
    if (this.passes(first.value)) return first
    for (let attempt = 1; attempt < attempts; attempt++) {
      const next = this.arbitrary.generate(random, biasFactor)
      if (this.passes(next.value)) return next
    }
    return first
  }
  canShrinkWithoutContext(value: unknown): value is A {
    return this.arbitrary.canShrinkWithoutContext(value) && this.passes(value)
  }
  shrink(value: A, context: unknown): FastCheck.Stream<FastCheck.Value<A>> {
    return this.arbitrary.shrink(value, context).filter((shrunk) => this.passes(shrunk.value))
  }
}

const boundedFilter = (refinement: AST.Refinement, from: AST.AST): AST.AST => {
  const candidate = Arbitrary.makeLazy(Schema.make(from))
  const passes = Schema.is(Schema.make(refinement))
  return AST.annotations(from, {
    [AST.ArbitraryAnnotationId]: () => (fc: typeof FastCheck) => new BoundedFilter(candidate(fc), passes)
  })
}

/**
 * Whether Effect can meet a refinement by construction: built-in all the way down its chain. A
 * built-in one over a custom one is bounded too, since Effect would apply it by rejection.
 */
const isBuiltIn = (ast: AST.AST): boolean =>
  ast._tag !== "Refinement" || (Option.isSome(AST.getSchemaIdAnnotation(ast)) && isBuiltIn(ast.from))

/** The type side of `ast`, with every custom filter bounded. */
const bounded = (ast: AST.AST): AST.AST => {
  switch (ast._tag) {
    case "Refinement": {
      const from = bounded(ast.from)
      return isBuiltIn(ast) ? new AST.Refinement(from, ast.filter, ast.annotations) : boundedFilter(ast, from)
    }
    case "TypeLiteral":
      return new AST.TypeLiteral(
        ast.propertySignatures.map((p) => new AST.PropertySignature(p.name, bounded(p.type), p.isOptional, p.isReadonly, p.annotations)),
        ast.indexSignatures.map((i) => new AST.IndexSignature(i.parameter, bounded(i.type), i.isReadonly)),
        ast.annotations
      )
    case "TupleType":
      return new AST.TupleType(
        ast.elements.map((e) => new AST.OptionalType(bounded(e.type), e.isOptional, e.annotations)),
        ast.rest.map((r) => new AST.Type(bounded(r.type), r.annotations)),
        ast.isReadonly,
        ast.annotations
      )
    case "Union":
      return AST.Union.make(ast.types.map(bounded), ast.annotations)
    case "Declaration":
      return new AST.Declaration(ast.typeParameters.map(bounded), ast.decodeUnknown, ast.encodeUnknown, ast.annotations)
    case "Suspend": {
      // Once: a recursive schema must keep meeting the same node.
      let inner: AST.AST | undefined
      return new AST.Suspend(() => (inner ??= bounded(ast.f())), ast.annotations)
    }
    case "Transformation":
      return bounded(AST.typeAST(ast))
    default:
      return ast
  }
}

const memo = new WeakMap<AST.AST, FastCheck.Arbitrary<unknown>>()

/** Values of the schema's type, custom filters bounded (so: not always valid). */
export const make = <A, I>(schema: Schema.Schema<A, I, never>): FastCheck.Arbitrary<A> => {
  let arbitrary = memo.get(schema.ast)
  if (arbitrary === undefined) {
    arbitrary = Arbitrary.make(Schema.make(bounded(AST.typeAST(schema.ast))))
    memo.set(schema.ast, arbitrary)
  }
  return arbitrary as FastCheck.Arbitrary<A>
}

/** A payload on the wire side: valid when the schema could be met, `{}` otherwise. */
export const validPayload = <A, I>(schema: Schema.Schema<A, I, never>): FastCheck.Arbitrary<unknown> => {
  const encode = Schema.encodeUnknownOption(schema)
  return make(schema).map((value) => Option.getOrElse(encode(value), () => ({})))
}

// ---------------------------------------------------------------------------------------------
// Hostile text inside otherwise valid payloads

/** Code units that no field may hold: lone surrogates, NUL, the other C0 controls, DEL, C1. */
export const breakingCharacters: ReadonlyArray<string> = ["\ud800", "\udbff", "\udc00", "\udfff", "\u0000", "\u0007", "\u001b", "\u007f", "\u0085", "\u009f"]

/** Well-formed text that mixes scripts: homoglyphs, right-to-left, joiners, combining marks, astral planes. */
export const mixedScripts: ReadonlyArray<string> = [
  "pаypal", // a Cyrillic а among Latin letters
  "Ελληνικά και English",
  "日本語とEnglishと한국어",
  "مرحبا hello שלום",
  "\u202eevil\u202c.exe",
  "👩‍👩‍👧‍👦🏳️‍🌈",
  "ℌ𝔲𝔡𝔡𝔩𝔢 𝟙𝟚𝟛",
  "e\u0301\u0301\u0301",
  "İstanbul ß ǅ",
  "zero\u200bwidth\ufeff"
]

const breaking: FastCheck.Arbitrary<string> = FastCheck.oneof(
  FastCheck.constantFrom(...breakingCharacters),
  FastCheck.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit)),
  FastCheck.oneof(FastCheck.integer({ min: 0, max: 0x1f }), FastCheck.integer({ min: 0x7f, max: 0x9f }))
    .map((unit) => String.fromCharCode(unit))
)

/** Text that must be refused (a breaking character somewhere) or kept as sent (mixed scripts). */
export const hostileText: FastCheck.Arbitrary<string> = FastCheck.oneof(
  FastCheck.tuple(FastCheck.string({ maxLength: 8 }), breaking, FastCheck.string({ maxLength: 8 })).map((parts) => parts.join("")),
  FastCheck.constantFrom(...mixedScripts),
  FastCheck.tuple(FastCheck.constantFrom(...mixedScripts), breaking).map(([text, c]) => `${text.slice(0, 4)}${c}${text.slice(4)}`)
)

type Path = ReadonlyArray<string | number>

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Where a wire value of `ast` holds free text: its string leaves that are not literals. */
const textPaths = (ast: AST.AST, value: unknown, at: Path): ReadonlyArray<Path> => {
  switch (ast._tag) {
    case "StringKeyword":
      return typeof value === "string" ? [at] : []
    case "TypeLiteral":
      return isRecord(value)
        ? ast.propertySignatures.flatMap((p) =>
          typeof p.name === "string" && p.name in value ? textPaths(p.type, value[p.name], [...at, p.name]) : []
        )
        : []
    case "TupleType":
      return Array.isArray(value)
        ? value.flatMap((element: unknown, i) => {
          const type = ast.elements[i]?.type ?? ast.rest[0]?.type
          return type === undefined ? [] : textPaths(type, element, [...at, i])
        })
        : []
    case "Union": {
      // The members the value could be: a path counts once.
      const paths = ast.types.flatMap((member) => textPaths(member, value, at))
      return [...new Map(paths.map((path) => [JSON.stringify(path), path])).values()]
    }
    case "Suspend":
      return textPaths(ast.f(), value, at)
    case "Refinement":
    case "Transformation":
      return textPaths(ast.from, value, at)
    default:
      return []
  }
}

const replaceAt = (value: unknown, path: Path, f: (text: string) => string): unknown => {
  if (path.length === 0) return typeof value === "string" ? f(value) : value
  const [head, ...rest] = path
  if (Array.isArray(value) && typeof head === "number") {
    return value.map((element: unknown, i) => i === head ? replaceAt(element, rest, f) : element)
  }
  if (isRecord(value) && typeof head === "string") return { ...value, [head]: replaceAt(value[head], rest, f) }
  return value
}

/** The free-text paths of a wire payload of `schema`. */
export const textPathsOf = <A, I>(schema: Schema.Schema<A, I, never>, payload: unknown): ReadonlyArray<Path> =>
  textPaths(AST.encodedAST(schema.ast), payload, [])

/** `payload` with the text at `path` spoilt by `character`, in place of its last code unit (so within its length). */
export const spoil = (payload: unknown, path: Path, character: string): unknown =>
  replaceAt(payload, path, (text) => `${text.slice(0, -1)}${character}`)

/** A valid payload whose every field but one is valid: one of its free strings is hostile text. */
export const withHostileText = <A, I>(schema: Schema.Schema<A, I, never>): FastCheck.Arbitrary<unknown> =>
  FastCheck.tuple(validPayload(schema), FastCheck.nat(), hostileText).map(([payload, n, text]) => {
    const paths = textPathsOf(schema, payload)
    return paths.length === 0 ? payload : replaceAt(payload, paths[n % paths.length]!, () => text)
  })
