/**
 * Reading a Huddle `/metrics` as Prometheus would: fetched with a bearer credential and parsed by
 * a real text-format parser (`parse-prometheus-text-format`, a port of Prometheus's own client
 * parser), then looked up by name and labels.
 */
import parsePrometheusTextFormat from "parse-prometheus-text-format"

export interface Sample {
  readonly labels?: Readonly<Record<string, string>>
  /** Counters and gauges. */
  readonly value?: string
}

export interface Family {
  readonly name: string
  readonly help: string
  readonly type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED"
  readonly metrics: ReadonlyArray<Sample>
}

/**
 * The families of an exposition. The parser merges the series of a histogram with labels into
 * one sample (their labels lost), so each histogram is given to it as what it is made of: its
 * `_count` and `_sum` series as counters of those names (the buckets are not read).
 */
export const parse = (text: string): ReadonlyArray<Family> => {
  const histograms = new Set(Array.from(text.matchAll(/^# TYPE (\S+) histogram$/gm), (match) => match[1]!))
  const lines: Array<string> = []
  for (const line of text.split("\n")) {
    const name = /^(?:# (?:HELP|TYPE) )?([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(line)?.[1]
    const family = name === undefined ? undefined : [...histograms].find((h) => name === h || name.startsWith(`${h}_`))
    if (family === undefined) {
      lines.push(line)
    } else if (line.startsWith("# TYPE")) {
      lines.push(`# TYPE ${family}_count counter`, `# TYPE ${family}_sum counter`)
    } else if (!line.startsWith("#") && (name === `${family}_count` || name === `${family}_sum`)) {
      lines.push(line)
    }
  }
  // Each counter's samples must follow its own TYPE line: regroup by name, keeping the order.
  const grouped = new Map<string, Array<string>>()
  for (const line of lines) {
    const name = /^(?:# (?:HELP|TYPE) )?([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(line)?.[1] ?? ""
    grouped.set(name, [...(grouped.get(name) ?? []), line])
  }
  return parsePrometheusTextFormat([...grouped.values()].flat().join("\n") + "\n") as ReadonlyArray<Family>
}

/** `GET {url}/metrics` with `token`: the status, the content type and the families. */
export const scrape = async (url: string, token: string) => {
  const response = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } })
  const text = await response.text()
  return {
    status: response.status,
    contentType: response.headers.get("content-type"),
    text,
    families: response.status === 200 ? parse(text) : []
  }
}

const matches = (sample: Sample, labels: Readonly<Record<string, string>>) =>
  Object.entries(labels).every(([name, value]) => sample.labels?.[name] === value)

/** The samples of `name` whose labels include `labels`. */
export const samples = (families: ReadonlyArray<Family>, name: string, labels: Readonly<Record<string, string>> = {}) =>
  (families.find((family) => family.name === name)?.metrics ?? []).filter((sample) => matches(sample, labels))

/** The sum of a counter's or gauge's matching series (0 when none). */
export const total = (families: ReadonlyArray<Family>, name: string, labels: Readonly<Record<string, string>> = {}) =>
  samples(families, name, labels).reduce((sum, sample) => sum + Number(sample.value ?? 0), 0)

/** The number of observations in a histogram's matching series. */
export const observations = (families: ReadonlyArray<Family>, name: string, labels: Readonly<Record<string, string>> = {}) =>
  total(families, `${name}_count`, labels)
