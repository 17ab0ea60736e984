/**
 * Questions about a codebase as a whole — an audit, a security review, an architecture overview,
 * test coverage — cannot be answered from the few passages that match their words: they switch to
 * deep inspection (more files, a larger budget, and facts computed over every file). `modeOf`
 * decides from the question; `coverage` is the first such fact, computed over the whole snapshot
 * (never sampled).
 */
import type { FileCategory, Snapshot, TestLink } from "./Snapshot.js"

export type DeepKind = "coverage" | "audit" | "security" | "architecture"

export type Mode =
  | { readonly mode: "focused"; readonly reason: string }
  | { readonly mode: "deep"; readonly reason: string; readonly kind: DeepKind }

// ---------------------------------------------------------------------------------------------
// Which mode a question asks for

const rx = (source: string) => new RegExp(source, "i")

/** Words that name the whole codebase ("this repo", "the codebase"): often just "the thing I'm in". */
const SCOPE = rx(String.raw`\b(?:code ?base|repo(?:sitory)?|project)\b|\bour code\b`)
/** Words that ask for all of it: "anywhere", "across", "the entire code", "every module". */
const WHOLE = rx(
  String.raw`\b(?:whole|entire|overall|everything|everywhere|anything|anywhere|across|as a whole)\b|\bany (?:part|file|module|package)s?\b|\ball (?:the |our )?(?:files|modules|packages|code|sources?|components|services|endpoints)\b|\bevery (?:file|module|package|endpoint)\b`
)

/** A named piece of code: an identifier, a path, a backticked name, or "the X handler/class/…". */
const SPECIFIC = [
  /`[^`]+`/,
  /\b[a-z]+[A-Z]\w*\b/, // camelCase
  /\b[A-Z][a-z]+[A-Z]\w*\b/, // PascalCase with two humps
  /\b\w+_\w+\b/, // snake_case
  /\b[\w-]+\/[\w./-]+/, // a path
  /\b[\w-]+\.(?:ts|tsx|js|jsx|mjs|py|go|rs|java|rb|cs|cpp|c|h|php|kt|swift|scala|sql|json|ya?ml|toml|md)\b/i,
  /\b\w+\(\)/, // a call
  rx(String.raw`\bthis (?:function|method|class|file|handler|endpoint|module|component|type|test|query|line)\b`),
  rx(
    String.raw`\bthe (?!whole\b|entire\b|overall\b|code ?base\b|repo\b|project\b)(?:[\w-]+ ){1,3}(?:handler|function|method|class|service|middleware|module|component|endpoint|type|logic|flag|option|query|loop|parser|client|controller|route|hook|reducer|schema|table|migration|architecture|layer|cache|worker|job)s?\b`
  ),
  rx(String.raw`\b(?:function|method|class|module|type) [A-Z_a-z][\w.]*\b`)
]

interface Rule {
  readonly kind: DeepKind
  /** Asks for the whole by themselves (unless the question names a piece of code and not the whole). */
  readonly strong: ReadonlyArray<RegExp>
  /** Ask for the whole only with words that ask for all of it ("anywhere", "across the codebase"). */
  readonly weak: ReadonlyArray<RegExp>
  readonly reason: string
}

// In order of precedence: a "security audit" is a security review, an "audit of test coverage" a coverage question.
const RULES: ReadonlyArray<Rule> = [
  {
    kind: "security",
    reason: "asks for a security review of the codebase",
    strong: [
      rx(String.raw`\bsecurity (?:review|audit|assessment|analysis|posture|scan|check|issues?|holes?|flaws?|problems?|risks?|concerns?|weakness(?:es)?|bugs?)\b`),
      rx(String.raw`\bvulnerabilit(?:y|ies)\b`),
      rx(String.raw`\bthreat model`),
      rx(String.raw`\bowasp\b|\bpen(?:etration)? ?test`),
      rx(String.raw`\bsecure\b.*\b(?:code ?base|repo(?:sitory)?|project|app(?:lication)?)\b`)
    ],
    weak: [
      rx(String.raw`\bvulnerable\b|\binjection\b|\bxss\b|\bcsrf\b|\bssrf\b|\brce\b|\bsecrets?\b|\bhard-?coded (?:keys?|passwords?|credentials?|tokens?)\b|\bcredentials?\b|\bunsafe\b|\binsecure\b|\bexploit`)
    ]
  },
  {
    kind: "coverage",
    reason: "asks about test coverage across the codebase",
    strong: [
      rx(String.raw`\buntested\b|\bcoverage\b`),
      rx(String.raw`\b(?:no|zero|without|lack(?:s|ing)?|missing|any|few|fewest|no corresponding) (?:unit |integration |e2e |automated )?tests?\b`),
      rx(String.raw`\b(?:not|never|aren't|isn't|weren't) (?:covered|tested)\b|\bhow (?:well|thoroughly|much) (?:is (?:it |this |the \w+ )?)?tested\b|\bwell[- ]tested\b`)
    ],
    weak: [rx(String.raw`\btested\b|\bcovered\b|\btests\b`)]
  },
  {
    kind: "audit",
    reason: "asks for an audit of the codebase",
    strong: [
      rx(String.raw`\baudit\b`),
      rx(String.raw`\btech(?:nical)? debt\b|\bcode (?:quality|smells?|health)\b|\bdead code\b|\bcode review of\b`),
      rx(String.raw`\b(?:find|list|spot|look for) (?:all |any |the )?(?:bugs|problems|issues|mistakes|anti-?patterns)\b`),
      rx(String.raw`\breview (?:the|this|our|my) (?:code ?base|repo(?:sitory)?|project|code)\s*(?:[?.!,]|$|please|for\b)`),
      rx(String.raw`\bwell[- ]documented\b|\bdocumentation (?:quality|coverage)\b`)
    ],
    weak: [rx(String.raw`\breview\b|\bbugs?\b|\bproblems?\b|\bissues\b|\bimprov(?:e|ed|ements?|ing)\b|\brefactor(?:ing)?\b|\bweak(?:ness(?:es)?| spots?)\b`)]
  },
  {
    kind: "architecture",
    reason: "asks for an overview of the codebase's architecture",
    strong: [
      rx(String.raw`\barchitecture\b|\bsystem design\b|\bbig picture\b|\bhigh[- ]level\b`),
      rx(String.raw`\b(?:project|code|directory|folder|repo(?:sitory)?|module|package) (?:structure|layout|organi[sz]ation)\b`),
      rx(String.raw`\bhow (?:is|are) (?:the|this|our) (?:code ?base|repo(?:sitory)?|project|code|app(?:lication)?|packages|modules) (?:structured|organi[sz]ed|laid out|architected|put together|split)\b`),
      rx(String.raw`\bwhat (?:does|do|is) (?:the|this|our) (?:repo(?:sitory)?|project|code ?base|app(?:lication)?|library|service) (?:do|for|about)\b`),
      rx(String.raw`\b(?:modules|packages|components|layers|services) depend on (?:each other|one another)\b|\bdependency graph\b|\bdesign patterns?\b.*\b(?:code ?base|repo(?:sitory)?|project)\b`),
      rx(String.raw`\bmain (?:components|modules|parts|pieces|packages|building blocks|layers|classes|entities|services|abstractions|concepts)\b|\bfit together\b|\btour of\b|\bwalk (?:me )?through (?:the|this|our) (?:code ?base|repo(?:sitory)?|project|code)\b`),
      rx(String.raw`\b(?:explain|summari[sz]e|describe|(?:overview|summary|description|explanation) of) (?:the|this|our) (?:code ?base|repo(?:sitory)?|project|app(?:lication)?)\s*(?:[?.!,]|$|as a whole|overall|to me|for me|please)`)
    ],
    weak: [rx(String.raw`\boverview\b|\bstructure\b|\bsummar(?:y|i[sz]e)\b|\bcomponents\b|\bmodules\b|\bdependencies\b|\bdesign\b`)]
  }
]

/**
 * Whether `question` is about specific code (focused retrieval) or about the codebase as a whole
 * (deep inspection), and of what kind.
 *
 * @example
 * modeOf("Which modules have no tests?") // { mode: "deep", kind: "coverage", reason: "asks about test coverage across the codebase" }
 * modeOf("How does parseArgs handle -v?") // { mode: "focused", reason: "asks about specific code" }
 */
export const modeOf = (question: string): Mode => {
  const whole = WHOLE.test(question)
  const scoped = whole || SCOPE.test(question)
  const specific = SPECIFIC.some((r) => r.test(question))
  for (const rule of RULES) {
    const strong = rule.strong.some((r) => r.test(question))
    const weak = rule.weak.some((r) => r.test(question))
    // A named piece of code keeps even "security review" focused, unless the question also names the whole.
    if ((strong && (scoped || !specific)) || (weak && whole)) return { mode: "deep", reason: rule.reason, kind: rule.kind }
  }
  return { mode: "focused", reason: specific ? "asks about specific code" : "asks nothing of the codebase as a whole" }
}

// ---------------------------------------------------------------------------------------------
// Test coverage, from the links the indexer found

export interface SourceTests {
  readonly path: string
  /** The tests that exercise it, and how each was linked (it imports it, or is named after it). */
  readonly tests: ReadonlyArray<{ readonly path: string; readonly via: TestLink["via"] }>
}

export interface DirectoryCoverage {
  readonly path: string
  readonly sources: number
  readonly tested: number
  readonly untested: number
}

export interface Coverage {
  /** Files in the snapshot; files skipped while indexing (binary, vendored, …). */
  readonly indexed: number
  readonly skipped: number
  /** Indexed files by category. */
  readonly byCategory: Readonly<Record<FileCategory, number>>
  /** Files this analysis covers: every source file and every test. */
  readonly analysed: number
  /** Every source file, in path order, with its tests (none for an untested one). */
  readonly sources: ReadonlyArray<SourceTests>
  readonly tested: number
  /** The source files no test exercises, in path order. */
  readonly untested: ReadonlyArray<string>
  /** Per folder of source files, in path order: how many are tested ("which modules have no tests"). */
  readonly directories: ReadonlyArray<DirectoryCoverage>
}

const byPath = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
const dirname = (path: string) => (path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : ".")

/** The test coverage of every source file of `snapshot`, as linked by the indexer. */
export const coverage = (snapshot: Snapshot): Coverage => {
  const category = new Map(snapshot.files.map((f) => [f.path, f.category] as const))
  const byCategory: Record<FileCategory, number> = { config: 0, source: 0, test: 0, docs: 0 }
  for (const file of snapshot.files) byCategory[file.category] += 1

  const tests = new Map<string, Map<string, TestLink["via"]>>()
  for (const link of snapshot.links) {
    if (category.get(link.source) !== "source" || !category.has(link.test) || link.test === link.source) continue
    let linked = tests.get(link.source)
    if (linked === undefined) tests.set(link.source, (linked = new Map()))
    // Linked both ways, it counts as an import: the stronger evidence.
    if (linked.get(link.test) !== "import") linked.set(link.test, link.via)
  }

  const sources = snapshot.files
    .filter((f) => f.category === "source")
    .map((f) => f.path)
    .sort(byPath)
    .map((path): SourceTests => ({
      path,
      tests: [...(tests.get(path) ?? new Map<string, TestLink["via"]>())].map(([test, via]) => ({ path: test, via })).sort((a, b) => byPath(a.path, b.path))
    }))
  const untested = sources.filter((s) => s.tests.length === 0).map((s) => s.path)

  const folders = new Map<string, { sources: number; tested: number }>()
  for (const source of sources) {
    const dir = dirname(source.path)
    const entry = folders.get(dir) ?? { sources: 0, tested: 0 }
    entry.sources += 1
    if (source.tests.length > 0) entry.tested += 1
    folders.set(dir, entry)
  }
  const directories = [...folders]
    .sort(([a], [b]) => byPath(a, b))
    .map(([path, { sources, tested }]) => ({ path, sources, tested, untested: sources - tested }))

  return {
    indexed: snapshot.files.length,
    skipped: snapshot.skipped.length,
    byCategory,
    analysed: byCategory.source + byCategory.test,
    sources,
    tested: sources.length - untested.length,
    untested,
    directories
  }
}
