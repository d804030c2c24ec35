/**
 * The set of stores a storage adapter provides.
 */
import { Context } from "effect"
import { ApplicationStore } from "./ApplicationStore.js"
import { CodeStore } from "./CodeStore.js"
import { ConsentStore } from "./ConsentStore.js"
import { DeviceStore } from "./DeviceStore.js"
import { FactorStore } from "./FactorStore.js"
import { KeyStore } from "./KeyStore.js"
import { LogoutStore } from "./LogoutStore.js"
import { OpenIdStore } from "./OpenIdStore.js"
import { OperatorStore } from "./OperatorStore.js"
import { PasskeyStore } from "./PasskeyStore.js"
import { RegistrationStore } from "./RegistrationStore.js"
import { ScopeStore } from "./ScopeStore.js"
import { SessionStore } from "./SessionStore.js"
import { SettingStore } from "./SettingStore.js"
import { ThrottleStore } from "./ThrottleStore.js"
import { TokenStore } from "./TokenStore.js"
import { UserStore } from "./UserStore.js"

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
  | KeyStore
  | FactorStore
  | PasskeyStore
  | LogoutStore
  | DeviceStore
  | ScopeStore
  | RegistrationStore
  | OperatorStore

/** One implementation of every store service, as an adapter builds them. */
export interface Implementations {
  readonly applications: ApplicationStore["Type"]
  readonly users: UserStore["Type"]
  readonly codes: CodeStore["Type"]
  readonly tokens: TokenStore["Type"]
  readonly consents: ConsentStore["Type"]
  readonly openIds: OpenIdStore["Type"]
  readonly settings: SettingStore["Type"]
  readonly sessions: SessionStore["Type"]
  readonly throttle: ThrottleStore["Type"]
  readonly keys: KeyStore["Type"]
  readonly factors: FactorStore["Type"]
  readonly passkeys: PasskeyStore["Type"]
  readonly logout: LogoutStore["Type"]
  readonly devices: DeviceStore["Type"]
  readonly scopes: ScopeStore["Type"]
  readonly registrations: RegistrationStore["Type"]
  readonly operators: OperatorStore["Type"]
}

/** The context providing every store service with the implementations `of`. */
export const make = (of: Implementations): Context.Context<Stores> =>
  Context.make(ApplicationStore, of.applications).pipe(
    Context.add(UserStore, of.users),
    Context.add(CodeStore, of.codes),
    Context.add(TokenStore, of.tokens),
    Context.add(ConsentStore, of.consents),
    Context.add(OpenIdStore, of.openIds),
    Context.add(SettingStore, of.settings),
    Context.add(SessionStore, of.sessions),
    Context.add(ThrottleStore, of.throttle),
    Context.add(KeyStore, of.keys),
    Context.add(FactorStore, of.factors),
    Context.add(PasskeyStore, of.passkeys),
    Context.add(LogoutStore, of.logout),
    Context.add(DeviceStore, of.devices),
    Context.add(ScopeStore, of.scopes),
    Context.add(RegistrationStore, of.registrations),
    Context.add(OperatorStore, of.operators)
  )

/** One builder of each store service, each building its store over the same `Over`. */
export type Builders<Over> = { readonly [K in keyof Implementations]: (over: Over) => Implementations[K] }

/** The context providing every store service, each built over `over` by its builder of `builders`. */
export const build = <Over>(builders: Builders<Over>, over: Over): Context.Context<Stores> =>
  make({
    applications: builders.applications(over),
    users: builders.users(over),
    codes: builders.codes(over),
    tokens: builders.tokens(over),
    consents: builders.consents(over),
    openIds: builders.openIds(over),
    settings: builders.settings(over),
    sessions: builders.sessions(over),
    throttle: builders.throttle(over),
    keys: builders.keys(over),
    factors: builders.factors(over),
    passkeys: builders.passkeys(over),
    logout: builders.logout(over),
    devices: builders.devices(over),
    scopes: builders.scopes(over),
    registrations: builders.registrations(over),
    operators: builders.operators(over)
  })
