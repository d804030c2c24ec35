/**
 * The set of stores a storage adapter provides.
 */
import type { ApplicationStore } from "./ApplicationStore.js"
import type { CodeStore } from "./CodeStore.js"
import type { ConsentStore } from "./ConsentStore.js"
import type { OpenIdStore } from "./OpenIdStore.js"
import type { SessionStore } from "./SessionStore.js"
import type { SettingStore } from "./SettingStore.js"
import type { ThrottleStore } from "./ThrottleStore.js"
import type { TokenStore } from "./TokenStore.js"
import type { UserStore } from "./UserStore.js"

/** Every store service; a storage adapter's layer provides all of them. */
export type Stores =
  | ApplicationStore
  | UserStore
  | CodeStore
  | TokenStore
  | ConsentStore
  | OpenIdStore
  | SettingStore
  | SessionStore
  | ThrottleStore
