import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { CurrentPrincipal } from "@huddle/domain/Principal"
import * as Envelope from "./Envelope.js"

/** Bearer authentication (an API key `hk_…` or a web-session token `hs_…`) for `/v1` endpoints. */
export class Authenticated extends HttpApiMiddleware.Tag<Authenticated>()("Authenticated", {
  failure: Envelope.Unauthorized,
  provides: CurrentPrincipal,
  security: {
    bearer: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(
        OpenApi.Description,
        "An API key (`hk_…`) or a web-session token (`hs_…` from POST /v1/auth/login)"
      )
    )
  }
}) {}
