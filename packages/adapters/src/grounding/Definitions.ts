/**
 * Definitions (functions, classes, methods, interfaces, types, exported or module-level values)
 * with their line ranges, read with tree-sitter for the languages whose grammar we ship
 * (TypeScript/TSX, JavaScript, Python, Go, Rust, Java, C#, C/C++, Ruby, PHP, shell), and with a
 * lexical fallback for other code. Each grammar's query names the definition node by its kind
 * (`@function`, `@class`, …) and its name (`@name`); where two patterns catch the same node, the
 * one written first (the more specific) decides the kind.
 */
import { Definition, type DefinitionKind } from "@huddle/domain/grounding/Snapshot"
import { lexicalDefinitions } from "./LexicalDefinitions.js"
import { type Grammar, load } from "./TreeSitter.js"

const jsFunctionValue = "[(arrow_function) (function_expression) (generator_function)]"

/** Shared by TypeScript, TSX and JavaScript (the TypeScript-only node types are added for those). */
const ecmaScript = (typescript: boolean) => `
(program (lexical_declaration (variable_declarator name: (identifier) @name value: ${jsFunctionValue}) @function))
(program (variable_declaration (variable_declarator name: (identifier) @name value: ${jsFunctionValue}) @function))
(export_statement declaration: (lexical_declaration (variable_declarator name: (identifier) @name value: ${jsFunctionValue}) @function))
(export_statement declaration: (variable_declaration (variable_declarator name: (identifier) @name value: ${jsFunctionValue}) @function))
(program (lexical_declaration (variable_declarator name: (identifier) @name value: (class)) @class))
(export_statement declaration: (lexical_declaration (variable_declarator name: (identifier) @name) @variable))
(export_statement declaration: (variable_declaration (variable_declarator name: (identifier) @name) @variable))
(function_declaration name: (identifier) @name) @function
(generator_function_declaration name: (identifier) @name) @function
(class_declaration name: (_) @name) @class
(class_body (method_definition name: (_) @name) @method)
${typescript
  ? `(class_body (public_field_definition name: (_) @name value: ${jsFunctionValue}) @method)
(class_body (abstract_method_signature name: (_) @name) @method)
(class_body (method_signature name: (_) @name) @method)
(abstract_class_declaration name: (_) @name) @class
(function_signature name: (identifier) @name) @function
(interface_declaration name: (_) @name) @interface
(type_alias_declaration name: (_) @name) @type
(enum_declaration name: (_) @name) @type
(internal_module name: (_) @name) @module
(module name: (_) @name) @module`
  : `(class_body (field_definition property: (_) @name value: ${jsFunctionValue}) @method)`}
`

const python = `
(class_definition body: (block (function_definition name: (identifier) @name) @method))
(class_definition body: (block (decorated_definition definition: (function_definition name: (identifier) @name) @method)))
(module (function_definition name: (identifier) @name) @function)
(module (decorated_definition definition: (function_definition name: (identifier) @name) @function))
(class_definition name: (identifier) @name) @class
(module (expression_statement (assignment left: (identifier) @name) @variable))
(module (type_alias_statement left: (type (identifier) @name)) @type)
`

const go = `
(function_declaration name: (identifier) @name) @function
(method_declaration name: (field_identifier) @name) @method
(type_spec name: (type_identifier) @name type: (struct_type)) @class
(type_spec name: (type_identifier) @name type: (interface_type)) @interface
(type_spec name: (type_identifier) @name) @type
(type_alias name: (type_identifier) @name) @type
(source_file (var_declaration (var_spec name: (identifier) @name) @variable))
(source_file (var_declaration (var_spec_list (var_spec name: (identifier) @name) @variable)))
(source_file (const_declaration (const_spec name: (identifier) @name) @variable))
`

const rust = `
(impl_item body: (declaration_list (function_item name: (identifier) @name) @method))
(trait_item body: (declaration_list (function_item name: (identifier) @name) @method))
(trait_item body: (declaration_list (function_signature_item name: (identifier) @name) @method))
(function_item name: (identifier) @name) @function
(struct_item name: (type_identifier) @name) @class
(union_item name: (type_identifier) @name) @class
(enum_item name: (type_identifier) @name) @type
(type_item name: (type_identifier) @name) @type
(trait_item name: (type_identifier) @name) @interface
(mod_item name: (identifier) @name) @module
(const_item name: (identifier) @name) @variable
(static_item name: (identifier) @name) @variable
(macro_definition name: (identifier) @name) @other
`

const java = `
(class_declaration name: (identifier) @name) @class
(record_declaration name: (identifier) @name) @class
(interface_declaration name: (identifier) @name) @interface
(annotation_type_declaration name: (identifier) @name) @interface
(enum_declaration name: (identifier) @name) @type
(method_declaration name: (identifier) @name) @method
(constructor_declaration name: (identifier) @name) @method
`

const csharp = `
(class_declaration name: (identifier) @name) @class
(struct_declaration name: (identifier) @name) @class
(record_declaration name: (identifier) @name) @class
(interface_declaration name: (identifier) @name) @interface
(enum_declaration name: (identifier) @name) @type
(delegate_declaration name: (identifier) @name) @type
(method_declaration name: (identifier) @name) @method
(constructor_declaration name: (identifier) @name) @method
(property_declaration name: (identifier) @name) @variable
(namespace_declaration name: (_) @name) @module
(file_scoped_namespace_declaration name: (_) @name) @module
`

const cppDeclarator = (inner: string) => `[
  (function_declarator declarator: ${inner})
  (pointer_declarator declarator: (function_declarator declarator: ${inner}))
  (reference_declarator (function_declarator declarator: ${inner}))
]`

const cpp = `
(field_declaration_list (function_definition declarator: ${cppDeclarator("(_) @name")}) @method)
(function_definition declarator: ${cppDeclarator("(qualified_identifier) @name")}) @method
(function_definition declarator: ${cppDeclarator("(_) @name")}) @function
(class_specifier name: (type_identifier) @name body: (field_declaration_list)) @class
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @class
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @class
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @type
(type_definition declarator: (type_identifier) @name) @type
(namespace_definition name: (_) @name) @module
(preproc_def name: (identifier) @name) @variable
(preproc_function_def name: (identifier) @name) @function
`

const ruby = `
(class body: (body_statement (method name: (_) @name) @method))
(module body: (body_statement (method name: (_) @name) @method))
(singleton_method name: (_) @name) @method
(method name: (_) @name) @function
(class name: (_) @name) @class
(module name: (_) @name) @module
(program (assignment left: (constant) @name) @variable)
`

const php = `
(function_definition name: (name) @name) @function
(method_declaration name: (name) @name) @method
(class_declaration name: (name) @name) @class
(interface_declaration name: (name) @name) @interface
(trait_declaration name: (name) @name) @interface
(enum_declaration name: (name) @name) @type
`

const bash = `
(function_definition name: (word) @name) @function
`

interface GrammarSpec {
  readonly grammar: Grammar
  readonly query: string
}

const typescriptSpec: GrammarSpec = { grammar: "typescript", query: ecmaScript(true) }
const tsxSpec: GrammarSpec = { grammar: "tsx", query: ecmaScript(true) }
const javascriptSpec: GrammarSpec = { grammar: "javascript", query: ecmaScript(false) }
const cppSpec: GrammarSpec = { grammar: "cpp", query: cpp }

const grammarsByExtension: Record<string, GrammarSpec> = {
  ts: typescriptSpec, mts: typescriptSpec, cts: typescriptSpec, tsx: tsxSpec,
  js: javascriptSpec, mjs: javascriptSpec, cjs: javascriptSpec, jsx: javascriptSpec,
  py: { grammar: "python", query: python }, pyi: { grammar: "python", query: python },
  go: { grammar: "go", query: go },
  rs: { grammar: "rust", query: rust },
  java: { grammar: "java", query: java },
  cs: { grammar: "c-sharp", query: csharp },
  c: cppSpec, h: cppSpec, cc: cppSpec, cpp: cppSpec, cxx: cppSpec, hpp: cppSpec, hh: cppSpec, hxx: cppSpec,
  rb: { grammar: "ruby", query: ruby }, rake: { grammar: "ruby", query: ruby },
  php: { grammar: "php", query: php },
  sh: { grammar: "bash", query: bash }, bash: { grammar: "bash", query: bash }
}

const extensionOf = (path: string): string => {
  const name = path.slice(path.lastIndexOf("/") + 1)
  const dot = name.lastIndexOf(".")
  return dot <= 0 ? "" : name.slice(dot + 1).toLowerCase()
}

/** Whether the file's definitions are read with a parser (rather than the lexical fallback). */
export const hasGrammar = (path: string): boolean => grammarsByExtension[extensionOf(path)] !== undefined

const kinds: ReadonlySet<string> = new Set<DefinitionKind>(["function", "class", "method", "interface", "type", "variable", "module", "other"])

// The node ends at column 0 of the line after its last character (a trailing line break): that line is not its.
const lastLine = (start: { row: number }, end: { row: number; column: number }): number =>
  end.column === 0 && end.row > start.row ? end.row : end.row + 1

// Definitions start near the top of the tree (a method of a class two namespaces deep starts at
// depth 9); not looking for them deep inside function bodies saves a fifth of the parse's time.
const maxStartDepth = 10

const cleanName = (name: string): string => name.replace(/^["'`]|["'`]$/g, "")

/** The file's definitions read with its grammar, or `undefined` when it has none or it failed to load. */
export const parsedDefinitions = async (path: string, text: string): Promise<Array<Definition> | undefined> => {
  const spec = grammarsByExtension[extensionOf(path)]
  if (spec === undefined) return undefined
  const loaded = await load(spec.grammar, spec.query).catch(() => undefined)
  if (loaded === undefined) return undefined
  const tree = loaded.parser.parse(text)
  if (tree === null) return undefined
  try {
    const found = new Map<string, { pattern: number; definition: Definition }>()
    for (const match of loaded.query.matches(tree.rootNode, { maxStartDepth })) {
      let nameText: string | undefined
      let node: (typeof match.captures)[number]["node"] | undefined
      let kind: string | undefined
      for (const capture of match.captures) {
        if (capture.name === "name") nameText = capture.node.text
        else if (kinds.has(capture.name)) {
          node = capture.node
          kind = capture.name
        }
      }
      if (nameText === undefined || node === undefined || kind === undefined) continue
      let name = cleanName(nameText)
      // `ns::Klass::method` (C++ out-of-class definition): the method's own name.
      if (name.includes("::")) name = name.slice(name.lastIndexOf("::") + 2)
      const key = `${node.startIndex}:${node.endIndex}:${name}`
      const previous = found.get(key)
      if (previous !== undefined && previous.pattern <= match.patternIndex) continue
      found.set(key, {
        pattern: match.patternIndex,
        definition: new Definition({
          path,
          name,
          kind: kind as DefinitionKind,
          line: node.startPosition.row + 1,
          end_line: lastLine(node.startPosition, node.endPosition)
        }, { disableValidation: true })
      })
    }
    return [...found.values()].map((entry) => entry.definition).sort(byPosition)
  } finally {
    tree.delete()
  }
}

export const byPosition = (a: Definition, b: Definition): number =>
  a.line - b.line || b.end_line - a.end_line || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

/**
 * The file's definitions: parsed where a grammar is available, lexical otherwise (and for code
 * whose grammar failed to load). Files in no programming language (prose, data) have none.
 */
export const definitionsOf = async (path: string, language: string, text: string): Promise<Array<Definition>> =>
  (await parsedDefinitions(path, text)) ?? lexicalDefinitions(path, language, text)
