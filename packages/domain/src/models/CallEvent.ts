/**
 * What a metered call tells its caller as it runs (`Metered.events`): the model being tried, its
 * output, and last how the call was settled (`Settled`).
 */
import { offlineProvider } from "./Catalog.js"
import { type CatalogModel, type FailedModel, type Finish, isOutput as isModelOutput, type ThinkingDelta, type ToolCallDelta, type Usage } from "./Model.js"

/** How a call ended, once its credits are settled. */
export interface Settled {
  readonly _tag: "Settled"
  /** The model that answered (or was last tried). */
  readonly model: CatalogModel
  /** The provider's counts when it reported them (`reported`), else an estimate. */
  readonly usage: Usage
  readonly reported: boolean
  /** Whether anything was produced or reported: a call with nothing consumed is released, not charged. */
  readonly consumed: boolean
  readonly charged: number
  /** Set when the payer's credits lowered the call's output cap (see `Quote.floorOutputTokens`). */
  readonly lowered?: Lowered | undefined
}

/** A call whose output cap was lowered to what the payer's credits cover: `to` tokens instead of `from`. */
export interface Lowered {
  readonly _tag: "Lowered"
  readonly from: number
  readonly to: number
}

export type CallEvent =
  /** First, and only when it happened: the output cap was lowered to what the credits cover. */
  | Lowered
  /**
   * The model being tried; a later one replaces it when it fails before any output. `failed`: the
   * models tried before it that failed (`offlineFallbackOf` reads it).
   */
  | { readonly _tag: "Answering"; readonly model: CatalogModel; readonly failed: ReadonlyArray<FailedModel> }
  /** A try that failed before any output; `willRetry` when the same model is tried again. */
  | { readonly _tag: "AttemptFailed"; readonly model: CatalogModel; readonly reason: string; readonly willRetry: boolean }
  | { readonly _tag: "Delta"; readonly text: string }
  | ToolCallDelta
  | ThinkingDelta
  | Finish
  /** Always the last event of a stream that did not fail. */
  | Settled

/** Whether an event is the model's output (text or a tool call): what a stream is held back for. */
export const isOutput: (event: CallEvent) => boolean = isModelOutput

/** The event saying which model is being tried. */
export type Answering = Extract<CallEvent, { readonly _tag: "Answering" }>

/**
 * The configured models the offline model is answering in place of, when it stands in for them
 * (`HUDDLE_OFFLINE_FALLBACK`, decision 0034); undefined for any other answer.
 */
export const offlineFallbackOf = (answering: Answering): ReadonlyArray<FailedModel> | undefined =>
  answering.model.provider === offlineProvider && answering.failed.length > 0 ? answering.failed : undefined
