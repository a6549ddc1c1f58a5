import { describe, expect, it } from "@effect/vitest"
import { calculate } from "../../../../providers/tau2/common/calculate.ts"

const run = (expression: string): string => {
  const r = calculate(expression)
  return r.ok ? r.output : `Error: ${r.message}`
}

// Expected texts are what upstream's calculate (Python 3.11 eval) answers.
describe("calculate", () => {
  it("prints the rounded result as a Python float", () => {
    expect(run("3131.1 + 4777.75 + 367.38")).toBe("8276.23")
    expect(run("864 / 4")).toBe("216.0")
    expect(run("917.015 + 0")).toBe("917.01")
    expect(run("0.0 * -1")).toBe("-0.0")
    expect(run("0.0001 * 0.5")).toBe("0.0")
  })

  it("floors with //, binds ** tighter than unary minus, and keeps big integers exact", () => {
    expect(run("-16 // 2")).toBe("-8.0")
    expect(run("-61 // 4")).toBe("-16.0")
    expect(run("-5 ** 2")).toBe("-25.0")
    expect(run("2 ** 3 ** 2")).toBe("512.0")
    expect(run("748031195 * 81793781")).toBe("6.1184299744998296e+16")
    expect(run("10 ** 30 // 10 ** 28")).toBe("100.0")
  })

  it("gives Python's ZeroDivisionError and OverflowError texts", () => {
    expect(run("64 / 0")).toBe("Error: division by zero")
    expect(run("1.0 / 0")).toBe("Error: float division by zero")
    expect(run("1 // 0")).toBe("Error: integer division or modulo by zero")
    expect(run("1.0 // 0")).toBe("Error: float floor division by zero")
    expect(run("0 ** -1")).toBe("Error: 0.0 cannot be raised to a negative power")
    expect(run("10 ** 400 * 1.0")).toBe("Error: int too large to convert to float")
    expect(run("10 ** 400 / 3")).toBe("Error: integer division result too large for a float")
    expect(run("10.0 ** 400")).toBe("Error: (34, 'Numerical result out of range')")
  })

  it("refuses characters outside its alphabet before evaluating", () => {
    expect(run("abs(-3)")).toBe("Error: Invalid characters in expression")
    expect(run("1e3 + 1")).toBe("Error: Invalid characters in expression")
    expect(run("5 % 2")).toBe("Error: Invalid characters in expression")
  })

  it("reports syntax errors as eval does", () => {
    expect(run("")).toBe("Error: invalid syntax (<string>, line 0)")
    expect(run("1 +")).toBe("Error: invalid syntax (<string>, line 1)")
    expect(run("(1 +")).toBe("Error: '(' was never closed (<string>, line 1)")
    expect(run("1)")).toBe("Error: unmatched ')' (<string>, line 1)")
    expect(run("(1 2)")).toBe("Error: invalid syntax. Perhaps you forgot a comma? (<string>, line 1)")
    expect(run("08")).toBe(
      "Error: leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers (<string>, line 1)"
    )
    expect(run("(*1)")).toBe("Error: cannot use starred expression here (<string>, line 1)")
  })

  it("evaluates the odd corners of the grammar: calls, tuples, Ellipsis, complex powers", () => {
    expect(run("(1)(2)")).toBe("Error: 'int' object is not callable")
    expect(run("()")).toBe("Error: float() argument must be a string or a real number, not 'tuple'")
    expect(run("...")).toBe("Error: float() argument must be a string or a real number, not 'ellipsis'")
    expect(run("() + 1")).toBe('Error: can only concatenate tuple (not "int") to tuple')
    expect(run("(-8) ** 0.5")).toBe("Error: float() argument must be a string or a real number, not 'complex'")
    expect(run("1(*2)")).toBe("Error: 1 argument after * must be an iterable, not int")
  })
})
