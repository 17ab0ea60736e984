/** How the benchmarks print: figures with a fixed number of digits, tables in aligned columns. */

export const fmt = (n, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "–")

/** The first row is the header; the first column is aligned left, the others right. */
export const printTable = (rows) => {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)))
  rows.forEach((row, index) => {
    console.log(`  ${row.map((cell, i) => (i === 0 ? String(cell).padEnd(widths[i]) : String(cell).padStart(widths[i]))).join("  ")}`)
    if (index === 0) console.log(`  ${widths.map((w) => "-".repeat(w)).join("  ")}`)
  })
}
