/** What the fake upstream answers every chat completion with: 20 tokens, streamed one per chunk. */
export const answer = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty."
export const chunks = 20
export const usage = { prompt_tokens: 24, completion_tokens: 20 }
