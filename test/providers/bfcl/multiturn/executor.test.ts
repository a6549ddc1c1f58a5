import { describe, expect, it } from "@effect/vitest"
import { canonDump, parsePythonJson } from "../../../../providers/bfcl/multiturn/canon.ts"
import { evalExpr, parseCall } from "../../../../providers/bfcl/multiturn/call.ts"
import { executeCall, openSession, sessionState } from "../../../../providers/bfcl/multiturn/executor.ts"
import { float, PyDict, PyOpaque, PySet, PyTuple, pyRepr, resultText } from "../../../../providers/bfcl/multiturn/py.ts"
import { PyRandom } from "../../../../providers/bfcl/multiturn/random.ts"
import { TicketAPI } from "../../../../providers/bfcl/multiturn/ticket.ts"
import { GorillaFileSystem } from "../../../../providers/bfcl/multiturn/filesystem.ts"
import { MathAPI } from "../../../../providers/bfcl/multiturn/math.ts"

const syntaxError = (text: string) => {
  const p = parseCall(text)
  return p.ok ? undefined : p.message
}

describe("the call parser", () => {
  it("gives CPython's syntax error texts for the malformed calls the corpus has", () => {
    expect(syntaxError("cat(")).toBe("'(' was never closed (<string>, line 1)")
    expect(syntaxError("cd(x=1 y=2)")).toBe("invalid syntax. Perhaps you forgot a comma? (<string>, line 1)")
    expect(syntaxError("ls(a=)")).toBe("invalid syntax (<string>, line 1)")
  })

  it("reads Python literals: escapes, signed numbers, lists, tuples, dicts, constants", () => {
    const p = parseCall(`f('a\\nb\\x41', "it's", -1.5e3, x=[1, (2,), {'k': None}], y=True)`)
    expect(p.ok).toBe(true)
    if (!p.ok) return
    const args = p.call.args.map(evalExpr)
    expect(args[0]).toBe("a\nbA")
    expect(args[1]).toBe("it's")
    expect(args[2]).toEqual(float(-1500))
    const x = evalExpr(p.call.kwargs[0]![1])
    expect(pyRepr(x)).toBe("[1, (2,), {'k': None}]")
    expect(evalExpr(p.call.kwargs[1]![1])).toBe(true)
  })
})

describe("Python's result texts", () => {
  it("dicts print as json.dumps with ensure_ascii, other values as str()", () => {
    expect(resultText(PyDict.fromRecord({ a: float(1e-7), b: float(100), c: "é\n", d: [true, null] }))).toBe(
      '{"a": 1e-07, "b": 100.0, "c": "\\u00e9\\n", "d": [true, null]}'
    )
    expect(resultText(["it's", "a", float(1e16)])).toBe(`["it's", 'a', 1e+16]`)
    expect(resultText(null)).toBe("None")
  })

  it("a dict json.dumps cannot write falls back to its repr", () => {
    expect(resultText(PyDict.fromRecord({ result: new PyOpaque("Decimal('1.4142')", "Decimal") }))).toBe("{'result': Decimal('1.4142')}")
    expect(resultText(PyDict.of([[new PyTuple([1, 2]), "x"]]))).toBe("{(1, 2): 'x'}")
  })
})

describe("float powers", () => {
  it("round as C's pow does, where JS's ** is one unit off", () => {
    const s = openSession([MathAPI], PyDict.empty, { modelName: "m", testEntryId: "t", longContext: undefined })
    expect(executeCall(s, "power(base=2, exponent=1.5)").result).toBe('{"result": 2.8284271247461903}')
    expect(executeCall(s, "power(base=-2, exponent=0.5)").result).toBe("{'result': (8.659560562354934e-17+1.4142135623730951j)}")
    expect(executeCall(s, "power(base=0.0, exponent=-1)").result).toBe("Error during execution: 0.0 cannot be raised to a negative power")
  })
})

describe("the canonical state dump", () => {
  it("keeps float apart from int, and marks tuples, sets and non-str keys", () => {
    expect(canonDump(PyDict.of([[1, float(5)], [2, new PyTuple([])]]))).toBe('{"__dict__":[[1,5.0],[2,{"__tuple__":[]}]]}')
    expect(canonDump(PySet.of([3, 1, 2]))).toBe('{"__set__":[1,2,3]}')
    expect(canonDump(parsePythonJson('{"a": 1, "b": 1.0, "c": "é"}'))).toBe('{"a":1,"b":1.0,"c":"é"}')
  })
})

describe("CPython's random.Random", () => {
  it("draws the numbers CPython draws for a seed", () => {
    const d = PyRandom.seeded(200191).draws()
    expect([d.randint(10000, 99999), d.randint(10000, 99999)]).toEqual([67410, 41772])
    expect(d.random()).toBe(0.11098638043221865)
  })
})

describe("the executor", () => {
  const session = () =>
    openSession([TicketAPI, GorillaFileSystem], PyDict.empty, { modelName: "m", testEntryId: "t", longContext: undefined })

  it("refuses blocked names, names no involved class has, and bad arguments as upstream prints them", () => {
    const s = session()
    expect(executeCall(s, "exit()").result).toBe("Error during execution: Function call exit is not allowed.")
    expect(executeCall(s, "list_users()").result).toBe("Error during execution: name 'list_users' is not defined")
    expect(executeCall(s, "ticket_login(username='a')").result).toBe(
      "Error during execution: TicketAPI.ticket_login() missing 1 required positional argument: 'password'"
    )
    expect(executeCall(s, "logout(force=True)").result).toBe("Error during execution: TicketAPI.logout() got an unexpected keyword argument 'force'")
  })

  it("prefixes method names inside string literals too, as upstream's regex does", () => {
    const s = session()
    const { session: after } = executeCall(s, "touch(file_name='a')")
    const { result, session: written } = executeCall(after, `echo(content="cd(folder='x') ls()", file_name='a')`)
    expect(result).toBe("None")
    expect(executeCall(written, "cat(file_name='a')").result).toBe(
      `{"file_content": "m_t_GorillaFileSystem_instance.cd(folder='x') m_t_GorillaFileSystem_instance.ls()"}`
    )
  })

  it("a call leaves the world it started from unchanged", () => {
    const s = session()
    const before = sessionState(s).sha256
    const { session: after } = executeCall(s, "mkdir(dir_name='d')")
    expect(sessionState(s).sha256).toBe(before)
    expect(sessionState(after).sha256).not.toBe(before)
  })
})
