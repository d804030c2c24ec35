/** What the admin JSON shapes share: times, as ISO 8601 in UTC. */
import { Schema } from "effect"

/** A time as the admin JSON writes it. */
export const Time = Schema.String.annotations({ format: "date-time" })

/** Epoch seconds as ISO 8601 in UTC. */
export const time = (seconds: number): string => new Date(seconds * 1000).toISOString()
