/** The memory audit store. */
import { Context, Effect } from "effect"
import type { AuditEvent } from "../../security/Audit.js"
import { AuditStore } from "../AuditStore.js"

const stored = (event: AuditEvent): AuditEvent => ({ ...event, actor: event.actor ?? null })

/** A fresh in-memory audit store (kept apart from `Stores` so adapters may add it on their own). */
export const makeAudit = (): Context.Context<AuditStore> => {
  const events: Array<AuditEvent> = []
  return Context.make(AuditStore, {
    append: (event) => Effect.sync(() => void events.push(stored(event))),
    // Memory writes complete in one synchronous step: appending after success is atomic with them.
    appendWith: (added, write) => Effect.tap(write, () => void events.push(...added.map(stored))),
    query: ({ limit, appKey, type, since }) =>
      Effect.sync(() =>
        events
          .map((e, i) => ({ e, i }))
          .filter(
            ({ e }) =>
              (appKey === undefined || e.appKey === appKey) &&
              (type === undefined || e.type === type) &&
              (since === undefined || e.at >= since)
          )
          .sort((a, b) => b.e.at - a.e.at || b.i - a.i)
          .slice(0, Math.max(0, limit))
          .map(({ e }) => e)
      ),
    tail: ({ limit, appKey }) =>
      Effect.sync(() => events.filter((e) => appKey === undefined || e.appKey === appKey).slice(-limit)),
    // No retention of its own: deletes whatever the caller asks, oldest first.
    purgeBefore: (cutoff, limit) =>
      Effect.sync(() => {
        const n = limit > 0 ? Math.ceil(limit) : 0
        const doomed = new Set(
          events
            .flatMap((e, i) => (e.at < cutoff ? [{ at: e.at, i }] : []))
            .sort((a, b) => a.at - b.at || a.i - b.i)
            .slice(0, n)
            .map(({ i }) => i)
        )
        let kept = 0
        for (const [i, e] of events.entries()) if (!doomed.has(i)) events[kept++] = e
        events.length = kept
        return doomed.size
      })
  })
}
