/**
 * Content ids of decoded task values, computed once per value: the domains key their per-task
 * caches (initial worlds, gold digests) by them, so a cache hit needs no re-encoding.
 */
import { ContentId } from "../../../src/index.ts"

/** The content id of `encode(task)`, remembered per task value. */
export const contentIdOnce = <A extends object>(encode: (task: A) => unknown): ((task: A) => string) => {
  const ids = new WeakMap<A, string>()
  return (task) => {
    let id = ids.get(task)
    if (id === undefined) {
      id = ContentId.ofUnsafe(encode(task))
      ids.set(task, id)
    }
    return id
  }
}
