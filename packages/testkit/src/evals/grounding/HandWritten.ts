/**
 * Hand-written questions over the pinned packages (`Packages.ts`), each with the files that answer
 * it, found by reading the package's code: what a developer new to the package would ask. Most
 * describe behaviour in their own words; a few name an identifier, as people also do.
 *
 * jsx-ast-utils publishes its sources (`src/`) beside their Babel-compiled copies (`lib/`): both
 * hold the code that answers, so either counts (`twin`). A question's expected files are every
 * file that holds the answer; a ranking is right at k when any of them is in its first k files.
 */

export interface Question {
  /** The package's name, as in `Packages.pinned`. */
  readonly pkg: string
  readonly question: string
  /** Paths relative to the package root. */
  readonly expected: ReadonlyArray<string>
}

/** A jsx-ast-utils source and its compiled copy. */
const twin = (path: string): ReadonlyArray<string> => [`src/${path}`, `lib/${path}`]

const jsx = (question: string, ...paths: ReadonlyArray<string>): Question => ({ pkg: "jsx-ast-utils", question, expected: paths.flatMap(twin) })
const qs = (question: string, ...expected: ReadonlyArray<string>): Question => ({ pkg: "qs", question, expected })
const resolve = (question: string, ...expected: ReadonlyArray<string>): Question => ({ pkg: "resolve", question, expected })

export const questions: ReadonlyArray<Question> = [
  // jsx-ast-utils
  jsx("How is the tag name of a JSX element worked out, including member expressions like Foo.Bar and namespaced names?", "elementType.js"),
  jsx("Where are the event handler prop names grouped by kind, such as keyboard, mouse and touch handlers?", "eventHandlers.js"),
  jsx("When a prop is passed through an object spread like {...{onClick}}, how is it found and turned into a JSX attribute?", "getProp.js"),
  jsx("How does the spreadStrict option change whether an element with a spread attribute counts as having a prop?", "hasProp.js"),
  jsx("Why does an attribute written without a value, like <div aria-hidden />, read as true?", "getPropValue.js"),
  jsx("Which function returns the name of a prop, and what does it give for a namespaced attribute such as xlink:href?", "propName.js"),
  jsx("How are the strings 'true' and 'false' in a literal prop value converted to booleans?", "values/Literal.js"),
  jsx("How is the value of a template literal with embedded expressions rebuilt as a string?", "values/expressions/TemplateLiteral.js"),
  jsx("Which extractor evaluates comparison and arithmetic operators such as === or + between two operands?", "values/expressions/BinaryExpression.js"),
  jsx("How are the && || and ?? operators evaluated when extracting a prop value?", "values/expressions/LogicalExpression.js"),
  jsx("What value is given for a prop whose value is a function call like {bar(1, 2)}?", "values/expressions/CallExpression.js"),
  jsx("How are TypeScript non-null assertions such as foo! turned into a string value?", "values/expressions/TSNonNullExpression.js"),
  jsx("Where are identifiers like undefined, Infinity or Math mapped to the real JavaScript globals?", "values/expressions/Identifier.js"),
  jsx("How is the value of an object literal with spread properties extracted?", "values/expressions/ObjectExpression.js"),
  jsx("Which module maps each expression node type to its extractor function and logs an error for a type it cannot resolve?", "values/expressions/index.js"),
  jsx(
    "Where does getLiteralPropValue decide that JSX elements and function calls have no literal value and yield null?",
    "values/index.js",
    "values/expressions/index.js"
  ),
  jsx("How are increment and decrement operators like count++ evaluated?", "values/expressions/UpdateExpression.js"),
  jsx("What does the extractor return for a ::this.handleClick bind expression?", "values/expressions/BindExpression.js"),
  jsx("How is a JSX fragment used as a prop value rendered back to a string?", "values/JSXFragment.js"),
  jsx("What is returned for unary operators such as typeof, void, delete and the ! negation?", "values/expressions/UnaryExpression.js"),

  // qs
  qs("Where is the maximum nesting depth of bracketed keys like a[b][c] enforced, and what happens when strictDepth is set?", "lib/parse.js"),
  qs("How does parsing detect the utf8=✓ charset sentinel and switch between utf-8 and iso-8859-1?", "lib/parse.js"),
  qs("Where is a cyclic object detected while serialising an object to a query string?", "lib/stringify.js"),
  qs("How are array values written in the brackets, indices, repeat or comma array formats?", "lib/stringify.js"),
  qs("Which function percent-encodes characters, including surrogate pairs, for a query string?", "lib/utils.js"),
  qs("How does the RFC1738 format turn encoded spaces into plus signs?", "lib/formats.js"),
  qs("How is the parameterLimit option applied, and when does it throw instead of dropping the extra parameters?", "lib/parse.js"),
  qs("Where are sparse arrays compacted after parsing?", "lib/utils.js", "lib/parse.js"),
  qs("Which function splits a key such as a[b][c] into the chain of nested keys?", "lib/parse.js"),
  qs("Why does a[100]=x parse into an object with the key 100 rather than into an array?", "lib/parse.js"),

  // resolve
  resolve("Where is the list of node_modules directories, from the start directory up to the file system root, computed?", "lib/node-modules-paths.js"),
  resolve("How is the user's home directory found on Windows, macOS and Linux?", "lib/homedir.js"),
  resolve("How does resolve find the file name of the module that called it, from a stack trace?", "lib/caller.js"),
  resolve("Which hook lets environments such as Yarn Plug'n'Play rewrite the options before a resolution starts?", "lib/normalize-options.js"),
  resolve("How does the command-line tool handle the --preserve-symlinks flag?", "bin/resolve"),
  resolve("Where does asynchronous resolution read a package.json and apply the packageFilter and pathFilter options?", "lib/async.js"),
  resolve("How does synchronous resolution load a directory through the main field of its package.json?", "lib/sync.js"),
  resolve("Where is the table of Node core module names, and whether each is available, built?", "lib/core.js")
]
