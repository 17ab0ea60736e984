/**
 * A page's heading and the document's title. The heading takes the focus when the page opens
 * (after the first), so that a keyboard or screen-reader user starts where the new page does.
 */
import type { ComponentChildren } from "preact"
import { useEffect, useRef } from "preact/hooks"

let opened = false

export const Page = ({ title, children }: { readonly title: string; readonly children: ComponentChildren }) => {
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => {
    document.title = `${title} · Huddle`
    if (opened) heading.current?.focus()
    opened = true
  }, [title])
  return (
    <>
      <h1 tabIndex={-1} ref={heading}>{title}</h1>
      {children}
    </>
  )
}
