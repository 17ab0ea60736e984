/** Ends the session on the server, then here; here even if the server cannot be reached. */
import { useApi } from "./ui/useApi.js"
import { useSession } from "./session.js"

export const LogoutButton = () => {
  const session = useSession()
  const api = useApi()
  const logout = async () => {
    const result = await api((client) => client.auth.logout())
    session.end({
      message: result._tag === "Right"
        ? "You are logged out."
        : `You are logged out of this page; the server said: ${result.left.message}`
    })
  }
  return <button type="button" class="link" onClick={logout}>Log out</button>
}
