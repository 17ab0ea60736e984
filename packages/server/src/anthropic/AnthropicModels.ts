/**
 * The model listing in Anthropic's shape (`GET /v1/models` and `GET /v1/models/{id}` when the
 * request carries `anthropic-version`, as Anthropic's SDKs send it): the same models as OpenAI's
 * listing (`Completions.list`), each `{type: "model", id, display_name, created_at}`, in one page.
 */
import type { Listed } from "@huddle/domain/answers/Completions"
import type { ModelInfo, ModelInfoList } from "./MessagesWire.js"

/** Whether a request is an Anthropic client's: it names the API version it speaks. */
export const asksAnthropic = (headers: { readonly [name: string]: string | undefined }): boolean =>
  headers["anthropic-version"] !== undefined

export const modelInfo = (createdAt: string) => (model: Listed): typeof ModelInfo.Type => ({
  type: "model",
  id: model.id,
  display_name: model.owned_by === "huddle" ? `Huddle ${model.id}` : model.id,
  created_at: createdAt
})

export const modelList = (listed: ReadonlyArray<Listed>, createdAt: string): typeof ModelInfoList.Type => {
  const data = listed.map(modelInfo(createdAt))
  return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null }
}
