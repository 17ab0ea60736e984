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
