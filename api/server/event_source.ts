/**
 * Where the Events RPC gets machine events: machined's event bus
 * (events/mod.ts), whose history replays what happened since boot before the
 * live events. Narrowed to what the handler needs, so tests can pass a bus of
 * their own.
 */
import type { EventBus } from "../../events/mod.ts";

/** A source of machine events: the bus's subscribe. */
export type EventSource = Pick<EventBus, "subscribe">;
