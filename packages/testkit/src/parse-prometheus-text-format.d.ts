/** The parser ships no types: its output, as the testkit reads it (see Scrape.ts). */
declare module "parse-prometheus-text-format" {
  const parse: (text: string) => ReadonlyArray<{
    readonly name: string
    readonly help: string
    readonly type: string
    readonly metrics: ReadonlyArray<{ readonly labels?: Readonly<Record<string, string>>; readonly value?: string }>
  }>
  export default parse
}
