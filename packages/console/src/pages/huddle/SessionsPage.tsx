/** `#/sessions`: the list; `#/sessions/new`: a new conversation; `#/sessions/<id>`: one conversation. */
import { useLocation } from "../../route.js"
import { Conversation } from "./Conversation.js"
import "./huddle.css"
import { SessionList } from "./SessionList.js"

export const SessionsPage = () => {
  const [id] = useLocation().segments
  if (id === undefined || id === "") return <SessionList />
  // Keyed by the address: another conversation starts afresh.
  return id === "new" ? <Conversation key="new" id={null} /> : <Conversation key={id} id={id} />
}
