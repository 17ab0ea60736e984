/**
 * Hand-written questions over the pinned packages (`Packages.ts`), each with the files that answer
 * it, found by reading the package's code: what a developer new to the package would ask. Most
 * describe behaviour in their own words; a few name an identifier, as people also do.
 *
 * jsx-ast-utils publishes its sources (`src/`) beside their Babel-compiled copies (`lib/`): both
 * hold the code that answers, so either counts (`twin`). A question's expected files are every
 * file that holds the answer; a ranking is right at k when any of them is in its first k files.
 *
 * Each question has a style, read by hand: `identifier` when it names something the code spells
 * (an identifier, an option, a file, a snippet of code such as `count++` or `a[b][c]`), `natural`
 * when it is written in plain words only, as people who do not know the code type. The questions
 * after "Added" below were written, with their style, before any change to retrieval was tried.
 */

export interface Question {
  /** The package's name, as in `Packages.pinned`. */
  readonly pkg: string
  readonly question: string
  /** Paths relative to the package root. */
  readonly expected: ReadonlyArray<string>
  readonly style: Style
}

export type Style = "identifier" | "natural"

/** Marks a question written in plain words (the default is `identifier`). */
const natural = (q: Question): Question => ({ ...q, style: "natural" })

/** A jsx-ast-utils source and its compiled copy. */
const twin = (path: string): ReadonlyArray<string> => [`src/${path}`, `lib/${path}`]

const jsx = (question: string, ...paths: ReadonlyArray<string>): Question => ({ pkg: "jsx-ast-utils", question, expected: paths.flatMap(twin), style: "identifier" })
const of = (pkg: string) => (question: string, ...expected: ReadonlyArray<string>): Question => ({ pkg, question, expected, style: "identifier" })
const qs = of("qs")
const resolve = of("resolve")
const ioredis = of("ioredis")
const pg = of("pg-protocol")

export const questions: ReadonlyArray<Question> = [
  // jsx-ast-utils
  jsx("How is the tag name of a JSX element worked out, including member expressions like Foo.Bar and namespaced names?", "elementType.js"),
  natural(jsx("Where are the event handler prop names grouped by kind, such as keyboard, mouse and touch handlers?", "eventHandlers.js")),
  jsx("When a prop is passed through an object spread like {...{onClick}}, how is it found and turned into a JSX attribute?", "getProp.js"),
  jsx("How does the spreadStrict option change whether an element with a spread attribute counts as having a prop?", "hasProp.js"),
  jsx("Why does an attribute written without a value, like <div aria-hidden />, read as true?", "getPropValue.js"),
  jsx("Which function returns the name of a prop, and what does it give for a namespaced attribute such as xlink:href?", "propName.js"),
  natural(jsx("How are the strings 'true' and 'false' in a literal prop value converted to booleans?", "values/Literal.js")),
  natural(jsx("How is the value of a template literal with embedded expressions rebuilt as a string?", "values/expressions/TemplateLiteral.js")),
  jsx("Which extractor evaluates comparison and arithmetic operators such as === or + between two operands?", "values/expressions/BinaryExpression.js"),
  jsx("How are the && || and ?? operators evaluated when extracting a prop value?", "values/expressions/LogicalExpression.js"),
  jsx("What value is given for a prop whose value is a function call like {bar(1, 2)}?", "values/expressions/CallExpression.js"),
  jsx("How are TypeScript non-null assertions such as foo! turned into a string value?", "values/expressions/TSNonNullExpression.js"),
  jsx("Where are identifiers like undefined, Infinity or Math mapped to the real JavaScript globals?", "values/expressions/Identifier.js"),
  natural(jsx("How is the value of an object literal with spread properties extracted?", "values/expressions/ObjectExpression.js")),
  natural(jsx("Which module maps each expression node type to its extractor function and logs an error for a type it cannot resolve?", "values/expressions/index.js")),
  jsx(
    "Where does getLiteralPropValue decide that JSX elements and function calls have no literal value and yield null?",
    "values/index.js",
    "values/expressions/index.js"
  ),
  jsx("How are increment and decrement operators like count++ evaluated?", "values/expressions/UpdateExpression.js"),
  jsx("What does the extractor return for a ::this.handleClick bind expression?", "values/expressions/BindExpression.js"),
  natural(jsx("How is a JSX fragment used as a prop value rendered back to a string?", "values/JSXFragment.js")),
  jsx("What is returned for unary operators such as typeof, void, delete and the ! negation?", "values/expressions/UnaryExpression.js"),

  // qs
  qs("Where is the maximum nesting depth of bracketed keys like a[b][c] enforced, and what happens when strictDepth is set?", "lib/parse.js"),
  qs("How does parsing detect the utf8=✓ charset sentinel and switch between utf-8 and iso-8859-1?", "lib/parse.js"),
  natural(qs("Where is a cyclic object detected while serialising an object to a query string?", "lib/stringify.js")),
  natural(qs("How are array values written in the brackets, indices, repeat or comma array formats?", "lib/stringify.js")),
  natural(qs("Which function percent-encodes characters, including surrogate pairs, for a query string?", "lib/utils.js")),
  qs("How does the RFC1738 format turn encoded spaces into plus signs?", "lib/formats.js"),
  qs("How is the parameterLimit option applied, and when does it throw instead of dropping the extra parameters?", "lib/parse.js"),
  natural(qs("Where are sparse arrays compacted after parsing?", "lib/utils.js", "lib/parse.js")),
  qs("Which function splits a key such as a[b][c] into the chain of nested keys?", "lib/parse.js"),
  qs("Why does a[100]=x parse into an object with the key 100 rather than into an array?", "lib/parse.js"),

  // resolve
  resolve("Where is the list of node_modules directories, from the start directory up to the file system root, computed?", "lib/node-modules-paths.js"),
  natural(resolve("How is the user's home directory found on Windows, macOS and Linux?", "lib/homedir.js")),
  natural(resolve("How does resolve find the file name of the module that called it, from a stack trace?", "lib/caller.js")),
  natural(resolve("Which hook lets environments such as Yarn Plug'n'Play rewrite the options before a resolution starts?", "lib/normalize-options.js")),
  resolve("How does the command-line tool handle the --preserve-symlinks flag?", "bin/resolve"),
  resolve("Where does asynchronous resolution read a package.json and apply the packageFilter and pathFilter options?", "lib/async.js"),
  resolve("How does synchronous resolution load a directory through the main field of its package.json?", "lib/sync.js"),
  natural(resolve("Where is the table of Node core module names, and whether each is available, built?", "lib/core.js")),

  // Added with the questions in plain words, before any change to retrieval (see the module's comment).
  natural(jsx("How do I check whether an element has any one of several props, or all of them?", "hasProp.js")),
  natural(jsx("How is an arrow function passed as a prop turned into a value?", "values/expressions/FunctionExpression.js")),
  natural(jsx("How is a condition with a question mark and colon in a prop value evaluated?", "values/expressions/ConditionalExpression.js")),
  natural(jsx("How is a list of values in square brackets passed to a prop extracted?", "values/expressions/ArrayExpression.js")),
  natural(qs("How are dots in keys turned into nested objects when parsing?", "lib/parse.js")),
  natural(qs("How are dates written into the query string?", "lib/stringify.js")),
  natural(qs("How are two objects merged when the same key appears more than once?", "lib/utils.js")),
  natural(qs("How are percent-encoded strings decoded, and what happens when decoding fails?", "lib/utils.js")),
  natural(resolve("How does it check whether a path is a file or a directory?", "lib/async.js", "lib/sync.js")),
  natural(resolve("How are symbolic links followed to their real location?", "lib/async.js", "lib/sync.js")),
  natural(resolve("How does it tell which Node versions have a given built-in module?", "lib/is-core.js", "lib/core.js", "lib/core.json")),

  // ioredis: TypeScript compiled to built/*.js, each file beside its declarations (built/*.d.ts)
  natural(ioredis("How long does the client wait before reconnecting after the connection drops, and when does it give up?", "built/redis/event_handler.js", "built/redis/RedisOptions.js")),
  natural(ioredis("What happens to commands sent while the client is still connecting?", "built/Redis.js")),
  natural(ioredis("How does a cluster client follow a redirection when a key's slot has moved to another node?", "built/cluster/index.js")),
  natural(ioredis("How is a prefix added in front of every key a command touches?", "built/Command.js")),
  natural(ioredis("How does a Lua script get loaded when the server does not have it cached yet?", "built/Script.js")),
  natural(ioredis("How are the host, port, password and database number read from a connection URL?", "built/utils/index.js")),
  natural(ioredis("How does the client find out which server is the master when it connects through sentinels?", "built/connectors/SentinelConnector/index.js")),
  natural(ioredis("How does it notice that the sentinels announced a failover to a new master?", "built/connectors/SentinelConnector/FailoverDetector.js")),
  natural(ioredis("How are commands issued in the same tick batched automatically into one round trip?", "built/autoPipelining.js")),
  natural(ioredis("How are the results of a transaction split back into one result per queued command?", "built/transaction.js", "built/utils/index.js")),
  natural(ioredis("How are messages published to subscribed channels told apart from ordinary replies?", "built/DataHandler.js")),
  natural(ioredis("How can I iterate over all keys with a cursor as a readable stream?", "built/ScanStream.js")),
  natural(ioredis("Which secure connection profiles with certificates for hosted services come built in?", "built/constants/TLSProfiles.js")),
  natural(ioredis("How are long arguments shortened in debug output?", "built/utils/debug.js")),
  ioredis("Where is MaxRetriesPerRequestError raised when a command has been retried too many times?", "built/redis/event_handler.js", "built/errors/MaxRetriesPerRequestError.js"),
  ioredis("What does scaleReads do when it is set to slave or all in a cluster?", "built/cluster/index.js"),
  ioredis("How does reconnectOnError decide to resend the failed command after reconnecting?", "built/Redis.js"),
  ioredis("Where are commands rejected when enableOfflineQueue is false and the stream is not writable?", "built/Redis.js"),

  // pg-protocol: TypeScript sources with their tests beside them (src/*.test.ts), an ESM wrapper; dist/ is skipped
  natural(pg("How does the parser cope with a message that arrives split across two network chunks?", "src/parser.ts")),
  natural(pg("How is the password message for logging in written to the wire?", "src/serializer.ts")),
  natural(pg("How is the first message with the user name, database and protocol version built?", "src/serializer.ts")),
  natural(pg("How are the fields of an error from the server, such as severity, code and hint, read?", "src/parser.ts")),
  natural(pg("How does the outgoing buffer grow when a message does not fit?", "src/buffer-writer.ts")),
  natural(pg("How are null-terminated strings read from the incoming bytes?", "src/buffer-reader.ts")),
  natural(pg("How does the client ask the server to cancel a running query?", "src/serializer.ts")),
  natural(pg("Which class describes the name and type of each column of a result?", "src/messages.ts")),
  pg("What does parseDataRowMessage give for a column whose length is -1?", "src/parser.ts"),
  pg("Where are the SASL initial response and the SCRAM final message serialised?", "src/serializer.ts")
]
