import { describe, expect, it } from "@effect/vitest"
import { definitionsOf, hasGrammar } from "@huddle/adapters/grounding/Definitions"
import { languageOf } from "@huddle/adapters/grounding/FileRules"

/** The file's definitions as `kind name line-end`, in file order. */
const read = async (path: string, lines: ReadonlyArray<string>) => {
  const definitions = await definitionsOf(path, languageOf(path), lines.join("\n") + "\n")
  expect(definitions.every((definition) => definition.path === path)).toBe(true)
  return definitions.map((d) => `${d.kind} ${d.name} ${d.line}-${d.end_line}`)
}

describe("Definitions", () => {
  it("TypeScript: functions, classes and their methods, interfaces, types, enums, namespaces, exported values", async () => {
    expect(await read("src/shop.ts", [
      /* 1 */ "import { x } from \"./x.js\"",
      /* 2 */ "export function total(items: Array<number>): number {",
      /* 3 */ "  return items.reduce((a, b) => a + b, 0)",
      /* 4 */ "}",
      /* 5 */ "export class Cart extends Base {",
      /* 6 */ "  private items: Array<number> = []",
      /* 7 */ "  add(item: number): void {",
      /* 8 */ "    this.items.push(item)",
      /* 9 */ "  }",
      /* 10 */ "  readonly clear = () => { this.items = [] }",
      /* 11 */ "}",
      /* 12 */ "export interface Item { readonly price: number }",
      /* 13 */ "export type Price = number",
      /* 14 */ "enum Currency { EUR, USD }",
      /* 15 */ "namespace Legacy {}",
      /* 16 */ "export const TAX = 0.2, discount = (p: number) => p * 0.9",
      /* 17 */ "const helper = function () {}",
      /* 18 */ "let counter = 0",
      /* 19 */ "export abstract class Shape { abstract area(): number }"
    ])).toEqual([
      "function total 2-4",
      "class Cart 5-11",
      "method add 7-9",
      "method clear 10-10",
      "interface Item 12-12",
      "type Price 13-13",
      "type Currency 14-14",
      "module Legacy 15-15",
      "variable TAX 16-16",
      "function discount 16-16",
      "function helper 17-17",
      "class Shape 19-19",
      "method area 19-19"
    ])
  })

  it("TSX and JavaScript", async () => {
    expect(await read("src/App.tsx", [
      "export const App = () => <main>{title()}</main>",
      "export function title(): string {",
      "  return \"shop\"",
      "}"
    ])).toEqual(["function App 1-1", "function title 2-4"])
    expect(await read("lib/index.mjs", [
      "export function f() {}",
      "const g = async () => 1",
      "class K {",
      "  m() {}",
      "  static s = () => 2",
      "}",
      "export const VERSION = \"1\"",
      "module.exports = { f }"
    ])).toEqual(["function f 1-1", "function g 2-2", "class K 3-6", "method m 4-4", "method s 5-5", "variable VERSION 7-7"])
  })

  it("Python: module-level functions and values, classes, methods (decorated too), not nested functions", async () => {
    expect(await read("shop/cart.py", [
      /* 1 */ "TAX = 0.2",
      /* 2 */ "class Cart(Base):",
      /* 3 */ "    size = 0",
      /* 4 */ "    def add(self, item):",
      /* 5 */ "        def check(): pass",
      /* 6 */ "        self.items.append(item)",
      /* 7 */ "",
      /* 8 */ "    @property",
      /* 9 */ "    def empty(self):",
      /* 10 */ "        return not self.items",
      /* 11 */ "",
      /* 12 */ "@cache",
      /* 13 */ "def total(items):",
      /* 14 */ "    return sum(items)",
      /* 15 */ "async def fetch(): pass"
    ])).toEqual([
      "variable TAX 1-1",
      "class Cart 2-10",
      "method add 4-6",
      "method empty 9-10",
      "function total 13-14",
      "function fetch 15-15"
    ])
  })

  it("Go: functions, methods, structs, interfaces, other types, package-level vars and consts", async () => {
    expect(await read("store/store.go", [
      /* 1 */ "package store",
      /* 2 */ "type Store struct {",
      /* 3 */ "\titems map[string]int",
      /* 4 */ "}",
      /* 5 */ "type Reader interface { Get(k string) int }",
      /* 6 */ "type ID string",
      /* 7 */ "func New() *Store { return &Store{} }",
      /* 8 */ "func (s *Store) Get(k string) int {",
      /* 9 */ "\treturn s.items[k]",
      /* 10 */ "}",
      /* 11 */ "var Default = New()",
      /* 12 */ "const (",
      /* 13 */ "\tMax = 10",
      /* 14 */ ")"
    ])).toEqual([
      "class Store 2-4",
      "interface Reader 5-5",
      "type ID 6-6",
      "function New 7-7",
      "method Get 8-10",
      "variable Default 11-11",
      "variable Max 13-13"
    ])
  })

  it("Rust: functions, methods in impls and traits, structs, enums, traits, modules, consts, macros", async () => {
    expect(await read("src/lib.rs", [
      /* 1 */ "mod parser;",
      /* 2 */ "pub struct Cart { items: Vec<u32> }",
      /* 3 */ "pub enum Currency { Eur, Usd }",
      /* 4 */ "pub trait Priced { fn price(&self) -> u32; }",
      /* 5 */ "impl Cart {",
      /* 6 */ "    pub fn new() -> Self {",
      /* 7 */ "        Cart { items: vec![] }",
      /* 8 */ "    }",
      /* 9 */ "}",
      /* 10 */ "pub fn total(c: &Cart) -> u32 { c.items.iter().sum() }",
      /* 11 */ "const MAX: u32 = 10;",
      /* 12 */ "macro_rules! cart { () => { Cart::new() } }"
    ])).toEqual([
      "module parser 1-1",
      "class Cart 2-2",
      "type Currency 3-3",
      "interface Priced 4-4",
      "method price 4-4",
      "method new 6-8",
      "function total 10-10",
      "variable MAX 11-11",
      "other cart 12-12"
    ])
  })

  it("Java: classes, records, interfaces, enums, methods and constructors", async () => {
    expect(await read("src/main/java/com/acme/Cart.java", [
      /* 1 */ "package com.acme;",
      /* 2 */ "public class Cart {",
      /* 3 */ "  private int size;",
      /* 4 */ "  public Cart() {}",
      /* 5 */ "  public int total() {",
      /* 6 */ "    return size;",
      /* 7 */ "  }",
      /* 8 */ "}",
      /* 9 */ "interface Priced { int price(); }",
      /* 10 */ "enum Currency { EUR }",
      /* 11 */ "record Item(int price) {}"
    ])).toEqual([
      "class Cart 2-8",
      "method Cart 4-4",
      "method total 5-7",
      "interface Priced 9-9",
      "method price 9-9",
      "type Currency 10-10",
      "class Item 11-11"
    ])
  })

  it("C#, C/C++, Ruby, PHP and shell have grammars too", async () => {
    expect(await read("Cart.cs", ["namespace Shop {", "  public class Cart {", "    public int Total() { return 0; }", "  }", "}"]))
      .toEqual(["module Shop 1-5", "class Cart 2-4", "method Total 3-3"])
    expect(await read("cart.c", ["static int total(int *items) {", "  return 0;", "}", "struct cart { int size; };", "#define MAX 10"]))
      .toEqual(["function total 1-3", "class cart 4-4", "variable MAX 5-5"])
    expect(await read("cart.cpp", ["namespace shop {", "class Cart { public: int size() { return 0; } };", "}", "int shop::Cart::total() { return 1; }"]))
      .toEqual(["module shop 1-3", "class Cart 2-2", "method size 2-2", "method total 4-4"])
    expect(await read("cart.rb", ["module Shop", "  class Cart", "    def total", "      0", "    end", "  end", "end", "def helper; end"]))
      .toEqual(["module Shop 1-7", "class Cart 2-6", "method total 3-5", "function helper 8-8"])
    expect(await read("cart.php", ["<?php", "function total() {}", "class Cart { public function add($i) {} }", "interface Priced {}"]))
      .toEqual(["function total 2-2", "class Cart 3-3", "method add 3-3", "interface Priced 4-4"])
    expect(await read("deploy.sh", ["build() {", "  make", "}", "function ship { :; }"])).toEqual(["function build 1-3", "function ship 4-4"])
  })

  it("other code falls back to keywords, with ranges from braces or indentation", async () => {
    expect(hasGrammar("Cart.kt")).toBe(false)
    expect(await read("Cart.kt", [
      /* 1 */ "data class Item(val price: Int)",
      /* 2 */ "class Cart {",
      /* 3 */ "    fun total(): Int {",
      /* 4 */ "        return 0",
      /* 5 */ "    }",
      /* 6 */ "}",
      /* 7 */ "fun helper() = 1",
      /* 8 */ "interface Priced {",
      /* 9 */ "}"
    ])).toEqual(["class Item 1-1", "class Cart 2-6", "method total 3-5", "function helper 7-7", "interface Priced 8-9"])
    expect(await read("shop.ex", [
      "defmodule Shop.Cart do",
      "  def total(items) do",
      "    Enum.sum(items)",
      "  end",
      "end"
    ])).toEqual(["module Shop.Cart 1-5", "function total 2-4"])
    expect(await read("cart.lua", ["local function total(items)", "  return 0", "end"])).toEqual(["function total 1-3"])
  })

  it("finds nothing in prose or data", async () => {
    expect(await read("README.md", ["# function total", "class Cart is documented here"])).toEqual([])
    expect(await read("config.yml", ["def: 1"])).toEqual([])
  })
})
