/**
 * Which source files of the pinned packages have tests, read by hand from the tests' `import` and
 * `require` statements (relative ones, resolved as Node does: a file, its `.js`, a directory's
 * `package.json` `main`, its `index.js`), directly or through a test helper the test imports.
 * Everything else listed is a source file that no test imports. A file a test reaches only
 * through other source files (qs's `lib/parse.js`, behind `lib/index.js`) is not counted as
 * tested: the measure is the one `DeepInspection.coverage` reports, a test linked to a file.
 *
 * Not listed: files under test directories (tests, helpers, fixtures), configuration and docs,
 * and build bundles the indexer reports as skipped (qs's `dist/qs.js`).
 */

export interface Truth {
  readonly pkg: string
  /** Each tested source file, with the tests that import it (the evidence). */
  readonly tested: Readonly<Record<string, ReadonlyArray<string>>>
  readonly untested: ReadonlyArray<string>
}

const expressions = [
  "ArrayExpression", "AssignmentExpression", "BinaryExpression", "BindExpression", "CallExpression", "ChainExpression",
  "ConditionalExpression", "FunctionExpression", "Identifier", "LogicalExpression", "MemberExpression", "NewExpression",
  "ObjectExpression", "OptionalCallExpression", "OptionalMemberExpression", "SequenceExpression", "SpreadElement",
  "TSNonNullExpression", "TaggedTemplateExpression", "TemplateLiteral", "ThisExpression", "TypeCastExpression",
  "UnaryExpression", "UpdateExpression", "index"
]
/** jsx-ast-utils' `values/` tree, which no test imports (the tests reach it through `getPropValue`). */
const values = ["values/JSXElement.js", "values/JSXFragment.js", "values/JSXText.js", "values/Literal.js", "values/index.js", ...expressions.map((e) => `values/expressions/${e}.js`)]
const jsxTop = ["elementType.js", "eventHandlers.js", "getProp.js", "getPropValue.js", "hasProp.js", "index.js", "propName.js"]

export const truths: ReadonlyArray<Truth> = [
  {
    pkg: "jsx-ast-utils",
    // Every test imports its module from ../../src; helper.js imports src/getProp; index-test.js also
    // requires each top-level src/*.js by a computed path (the same seven files).
    tested: {
      "src/elementType.js": ["__tests__/src/elementType-test.js"],
      "src/eventHandlers.js": ["__tests__/src/eventHandlers-test.js"],
      "src/getProp.js": [
        "__tests__/src/getProp-test.js",
        "__tests__/src/getProp-parser-test.js",
        "__tests__/helper.js (imported by every test but eventHandlers-test.js and index-test.js)"
      ],
      "src/getPropValue.js": [
        "__tests__/src/getPropValue-babelparser-test.js",
        "__tests__/src/getPropValue-flowparser-test.js",
        "__tests__/src/getPropLiteralValue-babelparser-test.js",
        "__tests__/src/getPropLiteralValue-flowparser-test.js"
      ],
      "src/hasProp.js": ["__tests__/src/hasProp-test.js"],
      "src/index.js": ["__tests__/src/index-test.js"],
      "src/propName.js": ["__tests__/src/propName-test.js"]
    },
    untested: [
      // The root files re-export lib/ (`module.exports = require('./lib').getProp`); the tests only stat them.
      "elementType.js", "eventHandlers.js", "eventHandlersByType.js", "getLiteralPropValue.js", "getProp.js", "getPropValue.js",
      "hasAnyProp.js", "hasEveryProp.js", "hasProp.js", "propName.js",
      ...[...jsxTop, ...values].map((path) => `lib/${path}`),
      ...values.map((path) => `src/${path}`)
    ]
  },
  {
    pkg: "qs",
    // `require('../')` from test/ is the package root: its package.json's main, lib/index.js.
    tested: {
      "lib/index.js": ["test/parse.js", "test/stringify.js"],
      "lib/utils.js": ["test/parse.js", "test/stringify.js", "test/utils.js"]
    },
    untested: ["lib/formats.js", "lib/parse.js", "lib/stringify.js"]
  },
  {
    pkg: "resolve",
    // `require('../')` from test/ is the package root: its main, index.js.
    tested: {
      "index.js": [
        "test/core.js", "test/dotdot.js", "test/faulty_basedir.js", "test/filter.js", "test/filter_sync.js", "test/mock.js", "test/mock_sync.js", "test/module_dir.js", "test/node_path.js",
        "test/nonstring.js", "test/pathfilter.js", "test/precedence.js", "test/resolver.js", "test/resolver_sync.js", "test/shadowed_core.js", "test/subdirs.js", "test/symlinks.js",
        "test/resolver/without_basedir/main.js (a fixture: require('../../../'))"
      ],
      "async.js": ["test/resolver.js", "test/home_paths.js"],
      "sync.js": ["test/resolver_sync.js", "test/home_paths_sync.js"],
      "lib/homedir.js": ["test/home_paths.js", "test/home_paths_sync.js"],
      "lib/node-modules-paths.js": ["test/node-modules-paths.js"]
    },
    untested: [
      "bin/resolve", "example/async.js", "example/sync.js",
      "lib/async.js", "lib/caller.js", "lib/core.js", "lib/is-core.js", "lib/normalize-options.js", "lib/sync.js"
    ]
  }
]
