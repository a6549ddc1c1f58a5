/**
 * CPython's `random.Random`: MT19937 seeded from an int as `init_by_array`, `randint` by rejection
 * sampling on `getrandbits`, `random()` from two draws (53 bits). The simulated APIs draw ids,
 * balances and timestamps from it, so a port must draw the same numbers in the same order.
 *
 * A generator is an immutable value: each draw returns the next generator beside the number.
 */

const N = 624
const M = 397

export class PyRandom {
  private constructor(private readonly mt: Uint32Array, private readonly index: number) {}

  /** `random.Random(seed)` for a non-negative or negative int seed (its absolute value is used). */
  static seeded(seed: number): PyRandom {
    let n = BigInt(Math.abs(Math.trunc(seed)))
    const key: Array<number> = []
    do {
      key.push(Number(n & 0xffffffffn))
      n >>= 32n
    } while (n > 0n)
    return new PyRandom(initByArray(key), N)
  }

  /** A mutable cursor for a run of draws; `done()` gives the generator after them. */
  draws(): Draws {
    return new Draws(new Uint32Array(this.mt), this.index)
  }

  static fromCursor(mt: Uint32Array, index: number): PyRandom {
    return new PyRandom(mt, index)
  }
}

export class Draws {
  constructor(private readonly mt: Uint32Array, private index: number) {}

  private next(): number {
    if (this.index >= N) {
      twist(this.mt)
      this.index = 0
    }
    let y = this.mt[this.index++] as number
    y ^= y >>> 11
    y = (y ^ ((y << 7) & 0x9d2c5680)) >>> 0
    y = (y ^ ((y << 15) & 0xefc60000)) >>> 0
    y ^= y >>> 18
    return y >>> 0
  }

  /** `getrandbits(k)` for 0 < k <= 53. */
  getrandbits(k: number): number {
    if (k <= 32) return this.next() >>> (32 - k)
    const lo = this.next()
    const hi = this.next() >>> (64 - k)
    return hi * 4294967296 + lo
  }

  /** `randint(a, b)`, both inclusive. */
  randint(a: number, b: number): number {
    const n = b - a + 1
    const k = bitLength(n)
    let r = this.getrandbits(k)
    while (r >= n) r = this.getrandbits(k)
    return a + r
  }

  /** `random()`: a float in [0, 1). */
  random(): number {
    const a = this.next() >>> 5
    const b = this.next() >>> 6
    return (a * 67108864 + b) / 9007199254740992
  }

  /** `uniform(a, b)`. */
  uniform(a: number, b: number): number {
    return a + (b - a) * this.random()
  }

  done(): PyRandom {
    return PyRandom.fromCursor(this.mt, this.index)
  }
}

const bitLength = (n: number): number => (n <= 0 ? 0 : n.toString(2).length)

const initGenrand = (s: number): Uint32Array => {
  const mt = new Uint32Array(N)
  mt[0] = s >>> 0
  for (let i = 1; i < N; i++) {
    const prev = mt[i - 1] as number
    const x = prev ^ (prev >>> 30)
    // 1812433253 * x + i, modulo 2^32, without losing bits to doubles
    mt[i] = (((((x & 0xffff0000) >>> 16) * 1812433253) << 16) + (x & 0x0000ffff) * 1812433253 + i) >>> 0
  }
  return mt
}

const mul32 = (a: number, b: number): number =>
  (((((a & 0xffff0000) >>> 16) * b) << 16) + (a & 0x0000ffff) * b) >>> 0

const initByArray = (key: ReadonlyArray<number>): Uint32Array => {
  const mt = initGenrand(19650218)
  let i = 1
  let j = 0
  for (let k = Math.max(N, key.length); k > 0; k--) {
    const prev = mt[i - 1] as number
    mt[i] = (((mt[i] as number) ^ mul32(prev ^ (prev >>> 30), 1664525)) + (key[j] as number) + j) >>> 0
    i++
    j++
    if (i >= N) {
      mt[0] = mt[N - 1] as number
      i = 1
    }
    if (j >= key.length) j = 0
  }
  for (let k = N - 1; k > 0; k--) {
    const prev = mt[i - 1] as number
    mt[i] = (((mt[i] as number) ^ mul32(prev ^ (prev >>> 30), 1566083941)) - i) >>> 0
    i++
    if (i >= N) {
      mt[0] = mt[N - 1] as number
      i = 1
    }
  }
  mt[0] = 0x80000000
  return mt
}

const twist = (mt: Uint32Array): void => {
  for (let kk = 0; kk < N; kk++) {
    const y = ((mt[kk] as number) & 0x80000000) | ((mt[(kk + 1) % N] as number) & 0x7fffffff)
    mt[kk] = ((mt[(kk + M) % N] as number) ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0)) >>> 0
  }
}
