/**
 * Telecom's files made from upstream code (common/fromSource.ts): both sides' tool files, and the
 * agent policy as `get_environment()` composes it (policy_type "manual").
 */
import { Either } from "effect"
import { type Rendering, source, toolsRendering } from "../common/fromSource.ts"

const model = source("src/tau2/domains/telecom/data_model.py", "f868cbbd344cadf6c376f21976edfa38b8cfe199922748e31eee666f791a0628")

const policy: Rendering = {
  outputs: ["tau2/telecom/policy-manual.md"],
  sources: [],
  data: ["tau2/telecom/main_policy.md", "tau2/telecom/tech_support_manual.md"],
  render: (inputs) =>
    Either.right([
      "<main_policy>\n" + inputs.data("tau2/telecom/main_policy.md") + "\n</main_policy>\n<tech_support_policy>\n" +
      inputs.data("tau2/telecom/tech_support_manual.md") + "\n</tech_support_policy>"
    ])
}

export const renderings: ReadonlyArray<Rendering> = [
  toolsRendering("tau2/telecom", "TelecomTools", [source("src/tau2/domains/telecom/tools.py", "388552434d1b8225e33e7958bdb6efccfe92b49e11d1838568d9b559514e9d01"), model]),
  toolsRendering("tau2/telecom", "TelecomUserTools", [
    source("src/tau2/domains/telecom/user_tools.py", "03fa751eeea3734313a3f5274223d42750fd5c1a28f2624265a678f271ac309d"),
    source("src/tau2/domains/telecom/user_data_model.py", "27be0006694e9a740dd378f42099d6d1afecbd445f7906aedcd1f800087377c2"),
    source("src/tau2/utils/pydantic_utils.py", "618dfc39b619bb0f623151682962ddc52bf2ea70bc2562dded884f118c84b78a")
  ], "user-tools"),
  policy
]
