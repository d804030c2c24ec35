/** Where things are. */
import { fileURLToPath } from "node:url"

/** The bench/ folder. */
export const benchRoot: string = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "")
/** The repository root. */
export const repoRoot: string = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "")
