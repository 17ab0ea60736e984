/**
 * A file's lines with their numbers, the cited ones highlighted and scrolled into view. Numbers
 * are not selectable, so copying the code copies the code alone. The block scrolls sideways
 * for long lines (and takes the focus for it, so a keyboard can scroll it too).
 */
import { useEffect, useRef } from "preact/hooks"
import type { Cited } from "./lines.js"

interface Props {
  readonly path: string
  readonly text: string
  readonly firstLine: number
  readonly cited: Cited | null
}

export const CodeView = ({ cited, firstLine, path, text }: Props) => {
  const firstCited = useRef<HTMLSpanElement>(null)
  useEffect(() => {
    firstCited.current?.scrollIntoView({ block: "center" })
  }, [text, cited?.start])
  const lines = text === "" ? [] : text.split("\n")
  const isCited = (n: number) => cited !== null && n >= cited.start && n <= cited.end
  return (
    <pre class="code" tabIndex={0} aria-label={`The text of ${path}`}>
      <code>
        {lines.map((line, i) => {
          const n = firstLine + i
          const marked = isCited(n)
          return (
            <span key={n} id={`L${n}`} class={marked ? "line cited" : "line"} {...(marked && n === cited?.start ? { ref: firstCited } : {})}>
              <span class="ln">{n}</span>
              {marked ? <mark>{line}</mark> : line}
              {"\n"}
            </span>
          )
        })}
      </code>
    </pre>
  )
}
