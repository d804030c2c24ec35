/**
 * Scale-out on SQLite with real processes: the scenarios of `scenarios.ts` against two server
 * processes on one database file, then against one server running two workers on one port.
 */

import { clusterOf, twoProcesses } from "./deployments.js"
import { describeMultiInstance } from "./scenarios.js"

describeMultiInstance("two server processes on one SQLite file", twoProcesses())

describeMultiInstance("one server with LATCHKEY_WORKERS=2 on one SQLite file", clusterOf(2))
