/**
 * A finished text streamed as if it were being written: groups of a few words whose
 * concatenation is the text (a council's consensus, the offline model's answer).
 */
export const wordGroups = (text: string, size = 4): ReadonlyArray<string> => {
  const words = text.match(/\s*\S+/g) ?? []
  const groups: Array<string> = []
  for (let i = 0; i < words.length; i += size) groups.push(words.slice(i, i + size).join(""))
  return groups
}
