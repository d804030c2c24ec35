import { Memory } from "@latchkey/core"
import { storageContract } from "@latchkey/storage-testkit"

storageContract("memory", Memory.layer)
