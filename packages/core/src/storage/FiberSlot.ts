/**
 * A value per fiber, set for the time an effect runs (`Effect.locally`'s meaning) and taken by
 * plain calls, for storage adapters: the audit events attached to a fiber's next write, the
 * transaction of the unit a fiber runs. It is a box in a FiberRef that its fiber changes in place,
 * so neither setting nor taking it copies the fiber's FiberRefs (each `FiberRef.set` does, and
 * `Effect.locally` does it twice around an acquireUseRelease: several microseconds on every
 * audited write and every unit).
 */
import { Effect, Exit, type Fiber, FiberRef, RuntimeFlags } from "effect"

type AnyFiber = Fiber.RuntimeFiber<unknown, unknown>

// The fiber the box belongs to: null in the copy a child gets when forked, until the child uses it
interface Box<V> {
  owner: AnyFiber | null
  value: V
}

/** A value per fiber, `empty` unless set by `around`. */
export interface FiberSlot<V> {
  /** The value of `fiber`. */
  readonly get: (fiber: AnyFiber) => V
  /** The value of `fiber`, leaving `empty` in its place. */
  readonly take: (fiber: AnyFiber) => V
  /**
   * `effect` with `value` in this fiber's slot, and the slot set back to what it held once
   * `effect` ends, succeeded, failed or interrupted. A fiber forked meanwhile starts with a copy.
   */
  readonly around: <A, E, R>(value: V, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/** A slot holding `empty` in every fiber until set. */
export const make = <V>(empty: V): FiberSlot<V> => {
  const ref = FiberRef.unsafeMake<Box<V> | null>(null, {
    // A child forked while a value is set starts with its own copy; a join keeps the parent's box
    fork: (box) => (box === null || box.value === empty ? null : { owner: null, value: box.value }),
    join: (parent) => parent
  })

  // The box of `fiber`, or null: a box another fiber owns (its FiberRefs copied over, not forked) is not this one's
  const boxOf = (fiber: AnyFiber): Box<V> | null => {
    const box = fiber.getFiberRef(ref)
    if (box === null) return null
    if (box.owner === null) box.owner = fiber
    return box.owner === fiber ? box : null
  }

  // `effect` with `value` in `box`, and what `box` held put back in its continuation
  const restoring = <A, E, R>(
    box: Box<V>,
    value: V,
    effect: Effect.Effect<A, E, R>
  ): Effect.Effect<A, E, R> => {
    const outer = box.value
    box.value = value
    return Effect.matchCauseEffect(effect, {
      onFailure: (cause) => {
        box.value = outer
        return Exit.failCause(cause)
      },
      onSuccess: (a) => {
        box.value = outer
        return Exit.succeed(a)
      }
    })
  }

  const setAround = <A, E, R>(
    fiber: AnyFiber,
    value: V,
    effect: Effect.Effect<A, E, R>
  ): Effect.Effect<A, E, R> => {
    const box = boxOf(fiber)
    if (box !== null) return restoring(box, value, effect)
    // A fiber's first: its own box, set once (the one step that copies its FiberRefs)
    const own: Box<V> = { owner: fiber, value: empty }
    return Effect.zipRight(FiberRef.set(ref, own), restoring(own, value, effect))
  }

  return {
    get: (fiber) => boxOf(fiber)?.value ?? empty,
    take: (fiber) => {
      const box = boxOf(fiber)
      if (box === null) return empty
      const value = box.value
      box.value = empty
      return value
    },
    // In an interruptible fiber the value is set, and the step setting it back pushed, with
    // interruption off: an interruption can neither come between them nor skip that step (an
    // interrupted fiber skips the failure handlers of its interruptible regions), so a value never
    // outlives `effect`, not even into the finalizers of a fiber interrupted inside it.
    around: (value, effect) =>
      Effect.withFiberRuntime((fiber, status) =>
        RuntimeFlags.interruption(status.runtimeFlags)
          ? Effect.uninterruptible(
              Effect.withFiberRuntime((inner) => setAround(inner, value, Effect.interruptible(effect)))
            )
          : setAround(fiber, value, effect)
      )
  }
}
