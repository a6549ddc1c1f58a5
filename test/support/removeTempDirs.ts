// vitest setupFile, run for each test file: after the file's tests, the folders tempDir made go.
import { afterAll } from "vitest"
import { removeTempDirs } from "./tempDirs.ts"

afterAll(removeTempDirs)
