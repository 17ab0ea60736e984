/**
 * Node's response, with three differences. It notes when its status line was written (`headAt`),
 * for the time to first byte: Node has no event for it, and patching each response's `writeHead`
 * gave every response a shape of its own. And `end(…, callback)` answers its callback even when the
 * connection has already closed. Node calls it only once the answer is flushed, which never
 * happens on a closed connection; the platform writes every whole answer with that callback and
 * waits for it, uninterruptibly. So each client that hung up before its answer left its request
 * waiting forever: its fiber and request scope held, its scope's finalizers never run, and
 * shutdown waiting on it. And it closes the connection after answering a request whose body the
 * server stopped reading (`NodeRequest`).
 */
import { type IncomingMessage, ServerResponse } from "node:http"
import { NodeRequest } from "./NodeRequest.js"

export class NodeResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  /** `performance.now()` when the status line was written (by `writeHead`, or by Node's implicit one). */
  headAt: number | undefined = undefined

  override writeHead(...args: Array<any>): this {
    this.headAt ??= performance.now()
    // A body left unread (NodeRequest): what the client still sends cannot start another request.
    if (this.req instanceof NodeRequest && this.req.abandoned) this.shouldKeepAlive = false
    return (super.writeHead as (...args: Array<any>) => this)(...args)
  }

  override end(...args: Array<any>): this {
    const callback: unknown = args.at(-1)
    if (typeof callback !== "function") return super.end(...args)
    let answered = false
    const answer = () => {
      if (answered) return
      answered = true
      this.off("close", answer)
      callback()
    }
    args[args.length - 1] = answer
    // 'close' has been emitted already when the connection closed before this answer.
    if (this.destroyed) process.nextTick(answer)
    else this.once("close", answer)
    return super.end(...args)
  }
}
