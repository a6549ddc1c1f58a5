/** A least-recently-used cache: once full, setting a new key evicts the entry used longest ago. */
export class LRUCache {
  constructor(capacity) {
    this.capacity = capacity
    // A Map iterates in insertion order: the first key is the least recently used.
    this.entries = new Map()
  }

  get(key) {
    if (!this.entries.has(key)) return undefined
    const value = this.entries.get(key)
    this.entries.delete(key)
    this.entries.set(key, value)
    return value
  }

  set(key, value) {
    if (this.entries.has(key)) this.entries.delete(key)
    this.entries.set(key, value)
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value)
  }

  get size() {
    return this.entries.size
  }
}
