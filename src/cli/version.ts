/** The command's version, as `assay --version` prints it. */
export const VERSION = "0.1.0"
