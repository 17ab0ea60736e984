/**
 * Node's request, with one difference: a body the server stops reading before its end (one over
 * the size limit, sent without a length to refuse it by) no longer ends the connection at once.
 * The platform destroys such a request when it gives up on it, and Node then destroys its socket,
 * so the client got no answer at all where it should get a 413. Here the connection stays up for
 * the answer, which then closes it (`NodeResponse` says `Connection: close`); what the client
 * still sends is discarded.
 */
import { IncomingMessage } from "node:http"

export class NodeRequest extends IncomingMessage {
  /** The server stopped reading the body before its end: the connection closes after the answer. */
  abandoned = false

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // A client that went away has closed the socket already; Node's own handling stays for it.
    if (!this.complete && !this.socket.destroyed) {
      this.abandoned = true
      // As Node's own: an error is passed on only to a request someone listens to for errors.
      return callback(this.listenerCount("error") === 0 ? null : error)
    }
    return super._destroy(error, callback)
  }
}
